import type { KillCause } from './kill-plan.js';

/** The one JSON line the harness prints. */
export interface CrashReport {
  readonly harness: 'crash';
  /** `kafka`, `pulsar-shared` or `pulsar-failover`. */
  readonly source: string;
  readonly records: number;
  readonly kills: number;
  readonly kill_points: Readonly<Record<KillCause, number>>;
  /** Child Postgres connections dropped (pg_terminate_backend) while children ran. */
  readonly pg_drops: number;
  readonly missing_raw: number;
  /** Summed over the secondaries (see missing_by_sink). */
  readonly missing_secondary: number;
  readonly missing_by_sink: Readonly<Record<string, number>>;
  /** Acknowledged Zerobus record ids that no produced record hashes to. */
  readonly zerobus_unknown_ids: number;
  /** Failures to read the fake Zerobus server's log (a corrupt record). */
  readonly zerobus_read_errors: number;
  /** Injected poison-stream failures that fired (lower bound: a killed child's last second is lost). */
  readonly zerobus_poisons: number;
  /** Zerobus rows acknowledged over the run, and the batches holding them. */
  readonly zerobus_rows: number;
  readonly overclaimed_ranges: number;
  readonly position_leads: number;
  /** Raw copies beyond the first plus Postgres insert conflicts (see README). */
  readonly duplicates_absorbed: number;
  readonly recovery_replayed: number;
  readonly seed: number;
  readonly elapsed_s: number;
  /** Rows beyond the first for one (partition, offset): two record ids for one position. */
  readonly duplicate_rows: number;
  /** Rows whose record id or payload id differs from what raw holds at that offset. */
  readonly id_mismatches: number;
  /** Raw reads that failed (e.g. two stored copies of an offset that differ). */
  readonly raw_conflicts: number;
  /**
   * At the end, after the final pipelines opened (each merges what raw holds
   * into the store, ADR 0012): offsets raw holds below the committed
   * position that raw's recorded coverage still lacks.
   */
  readonly raw_coverage_holes: number;
  /** The same at any check after a kill: lag the next open repairs, not a finding. */
  readonly raw_coverage_lag_max: number;
  /** Children that exited on their own with a failure during the kill cycles. */
  readonly child_failures: number;
  /** Recovery cycles whose child found nothing to replay and exited before its crash point. */
  readonly recovery_idle: number;
  readonly duplicates: { readonly raw: number; readonly pg: number };
  readonly cycles: number;
}

/** The findings that fail the run: each is a lost record or a state that would lose one. */
export function findings(report: CrashReport): string[] {
  const out: string[] = [];
  const check = (name: string, value: number): void => {
    if (value !== 0) out.push(`${name}=${value}`);
  };
  check('missing_raw', report.missing_raw);
  check('missing_secondary', report.missing_secondary);
  check('overclaimed_ranges', report.overclaimed_ranges);
  check('position_leads', report.position_leads);
  check('duplicate_rows', report.duplicate_rows);
  check('id_mismatches', report.id_mismatches);
  check('raw_conflicts', report.raw_conflicts);
  check('raw_coverage_holes', report.raw_coverage_holes);
  check('zerobus_unknown_ids', report.zerobus_unknown_ids);
  check('zerobus_read_errors', report.zerobus_read_errors);
  return out;
}
