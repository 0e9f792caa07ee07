export * from './parquet-format.js';
export * from './parquet-sink.js';
export * from './parquet-files-part.js';
