export * from './off-thread.js';
export * from './serve-off-thread.js';
export * from './packed-values.js';
export * from './packed-json.js';
export * from './compiled-worker.js';
export * from './worker-limits.js';
