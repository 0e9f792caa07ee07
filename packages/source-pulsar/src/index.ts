export * from './errors.js';
export * from './pulsar-port.js';
export * from './message-id.js';
export * from './ws-port.js';
