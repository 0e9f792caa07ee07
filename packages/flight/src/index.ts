export * from './errors.js';
export * from './flight-messages.js';
export { ipcMessageOf, FlightBatchReader } from './flight-data-framing.js';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  FLIGHT_SERVICE,
  flightServiceDefinition,
  methodPath,
  type FlightMethod,
} from './flight-service.js';
export * from './flight-put.js';
export * from './flight-client.js';
export * from './flight-server.js';
export * from './flight-put-lane.js';
export * from './flight-sink.js';
export * from './flight-raw-sink.js';
export * from './flight-sink-part.js';
export * from './flight-source-options.js';
export * from './flight-source.js';
export * from './flight-source-part.js';
