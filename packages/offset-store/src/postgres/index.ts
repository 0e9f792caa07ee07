// @thalweg/offset-store/postgres: coverage and leases in PostgreSQL. Needs the
// optional peer pg (and @types/pg for its types).
export * from './postgres-coverage.js';
export * from './pg-failure.js';
export { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from './postgres-schema.js';
export * from '../lease/postgres-lease-store.js';
export { LEASE_SCHEMA_VERSION } from '../lease/postgres-lease-schema.js';
