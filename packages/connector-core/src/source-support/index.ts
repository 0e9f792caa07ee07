export * from './batch-queue.js';
export * from './pause-set.js';
export * from './stream-feed.js';
export * from './one-stream-partition.js';
