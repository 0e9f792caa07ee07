export * from './errors.js';
export * from './instrument-metrics.js';
