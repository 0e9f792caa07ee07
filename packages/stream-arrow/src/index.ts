export * from './stream-watermarks.js';
export * from './batch-sink.js';
