export * from './errors.js';
export * from './pulsar-port.js';
export * from './message-id.js';
export * from './options.js';
export * from './to-record.js';
export * from './pulsar-subscription-source.js';
export * from './pulsar-reader-source.js';
export * from './pulsar-part.js';
