export * from './errors.js';
export * from './output-limit.js';
export * from './lz4-frame.js';
export * from './zstd.js';
export * from './ipc-body-compression.js';
