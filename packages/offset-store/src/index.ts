export * from './errors.js';
export * from './covered-range.js';
export * from './range-set.js';
export * from './coverage-store.js';
export * from './coverage-backend.js';
export * from './in-memory-coverage.js';
export * from './leveldb/leveldb-coverage.js';
export * from './postgres/postgres-coverage.js';
export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from './postgres/postgres-schema.js';
