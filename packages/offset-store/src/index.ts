// What needs no storage client: the interfaces, the range arithmetic, the
// in-memory stores and the write-behind tiering. Each backend that needs a
// client is its own subpath (ADR 0027), so installing this package pulls
// neither classic-level, pg nor the AWS SDK:
//   @thalweg/offset-store/leveldb   LevelDbCoverage            (classic-level)
//   @thalweg/offset-store/postgres  PostgresCoverage, leases   (pg)
//   @thalweg/offset-store/s3        S3Coverage, leases         (@aws-sdk/client-s3)
export * from './errors.js';
export * from './covered-range.js';
export * from './range-set.js';
export * from './coverage-store.js';
export * from './coverage-backend.js';
export * from './in-memory-coverage.js';
export * from './leveldb/leveldb-tier.js';
export * from './write-behind-coverage.js';
export * from './lease/lease-store.js';
export * from './lease/lease-errors.js';
export {
  MAX_LEASE_KEY_BYTES,
  MAX_LEASE_HOLDER_BYTES,
  MAX_LEASE_TTL_MS,
} from './lease/lease-input.js';
export * from './lease/in-memory-lease-store.js';
