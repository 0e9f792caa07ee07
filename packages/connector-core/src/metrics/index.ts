export * from './histogram.js';
export * from './counter.js';
