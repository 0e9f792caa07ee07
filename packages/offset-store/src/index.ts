export * from './errors.js';
export * from './covered-range.js';
export * from './range-set.js';
export * from './coverage-store.js';
export * from './coverage-backend.js';
export * from './in-memory-coverage.js';
export * from './leveldb/leveldb-coverage.js';
export * from './leveldb/leveldb-tier.js';
export * from './postgres/postgres-coverage.js';
export * from './s3/s3-coverage.js';
export * from './write-behind-coverage.js';
export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from './postgres/postgres-schema.js';
export * from './lease/lease-store.js';
export * from './lease/lease-errors.js';
export {
  MAX_LEASE_KEY_BYTES,
  MAX_LEASE_HOLDER_BYTES,
  MAX_LEASE_TTL_MS,
} from './lease/lease-input.js';
export * from './lease/in-memory-lease-store.js';
export * from './lease/postgres-lease-store.js';
export { LEASE_SCHEMA_VERSION } from './lease/postgres-lease-schema.js';
export * from './lease/lease-objects.js';
export * from './lease/s3-lease-store.js';
