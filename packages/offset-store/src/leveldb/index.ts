// @thalweg/offset-store/leveldb: coverage on local disk, next to raw. Needs
// the optional peer classic-level.
export * from './leveldb-coverage.js';
