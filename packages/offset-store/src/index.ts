export * from './errors.js';
export * from './covered-range.js';
export * from './range-set.js';
export * from './coverage-store.js';
export * from './in-memory-coverage.js';
