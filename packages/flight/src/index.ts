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
