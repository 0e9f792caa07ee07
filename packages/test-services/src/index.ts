export * from './service-env.js';
export * from './pulsar-env.js';
export * from './flight-env.js';
export * from './etcd-env.js';
export * from './unique-name.js';
export * from './type-equals.js';
export * from './waits.js';
export * from './read-measure.js';
