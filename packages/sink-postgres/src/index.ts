export * from './errors.js';
export * from './table-spec.js';
export * from './pg-batch.js';
export type { StatementShape } from './insert-plan.js';
export * from './classify-error.js';
export { ensureTable, createTableSql } from './ensure-table.js';
export type {
  PoisonPolicy,
  RetryExhaustedPolicy,
  PostgresSinkHooks,
  PostgresSinkOptions,
  ResolvedOptions,
  TransactionProbe,
  TransactionalCoverage,
} from './sink-options.js';
export type { PostgresSinkStats } from './sink-stats.js';
export * from './postgres-sink.js';
export { postgres, type PostgresPartOptions, type RowMapping } from './postgres-part.js';
