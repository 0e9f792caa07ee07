export * from './ack-lane.js';
export * from './delivery-metrics.js';
export * from './delivery-pressure.js';
export * from './retry-policy.js';
export * from './submit-queue.js';
