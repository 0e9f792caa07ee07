export * from './headers-codec.js';
export * from './header-encoder.js';
export * from './record-columns.js';
export * from './columnar-batch.js';
export * from './columns-writer.js';
export * from './batch-count.js';
export * from './columns-check.js';
export * from './buffer-pool.js';
