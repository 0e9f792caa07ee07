export * from './errors.js';
export * from './classify-error.js';
export * from './transport.js';
export * from './fake-transport.js';
export * from './config.js';
export * from './stream-metrics.js';
export * from './zerobus-sink.js';
export type { PendingConfirm } from './pending-confirm.js';
