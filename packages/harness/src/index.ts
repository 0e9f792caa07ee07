/*
 * The crash harness runs as two programs (crash.js, child.js); this entry
 * exports the pieces they are built from, for the package's own tests.
 */
export * from './errors.js';
export * from './crash-point.js';
export * from './killable-parts.js';
export * from './kill-plan.js';
export * from './crash-args.js';
export * from './child-args.js';
export * from './crash-report.js';
export * from './final-audit.js';
export * from './progress-line.js';
export * from './seeded-random.js';
export { contiguousPrefix, type RawContents, type RawRecord } from './raw-audit.js';
export { overclaimedRanges, type CoverageView } from './coverage-audit.js';
export type { TableRow } from './table-audit.js';
