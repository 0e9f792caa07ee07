// @thalweg/coordination: coordination as a configured mode (ADR 0035).
// `coordination({ mode })` opens it; the etcd client (modes 3, 5, 7) and the
// AWS SDK (mode 1's S3 backup) are optional peers, loaded only when used.
export * from './coordination.js';
export * from './errors.js';
export { coordination } from './open-coordination.js';
export { modeRefusal, type CoordinationOptions } from './options.js';
export type { BackupStore } from './backup-store.js';
export * from './scheduler.js';
export {
  inMemoryCoordination,
  DEFAULT_MAX_SET_ENTRIES,
  type InMemoryCoordinationOptions,
} from './memory/memory-coordination.js';
export { BINARY_KEY_BYTES } from './memory/key-table.js';
