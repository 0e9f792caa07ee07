export * from './parquet-format.js';
export * from './parquet-sink.js';
export * from './parquet-files-part.js';
export * from './parquet-export-part.js';
