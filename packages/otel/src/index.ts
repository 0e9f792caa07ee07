export * from './errors.js';
export * from './instrument-metrics.js';
export * from './span-names.js';
export * from './trace-events.js';
