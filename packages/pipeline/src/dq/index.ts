export * from './dq-check.js';
export * from './dq-audit-store.js';
export * from './dq-audit-file.js';
export type { DqAuditStats } from './dq-audit-recorder.js';
