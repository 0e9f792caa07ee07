export * from './batch-queue.js';
export * from './pause-set.js';
