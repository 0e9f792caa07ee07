export * from './native-binding.js';
export * from './arrow-data-type.js';
export * from './sdk-offset.js';
export * from './sdk-options.js';
export { isSecondaryClosure } from './sdk-failure.js';
export { SdkTransport, type SdkTransportInit } from './sdk-transport.js';
export * from './sdk-transport-factory.js';
