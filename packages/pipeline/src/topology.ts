import type {
  Clock,
  ConfirmTarget,
  MaybePromise,
  QuarantineEntry,
  QuarantineNote,
  ReplayableSink,
  Scheduler,
  Sink,
  Source,
  SourceBatch,
  SourceHeaders,
} from '@thalweg/connector-core';
import type { Coordination } from '@thalweg/coordination';
import type { CoverageStore, LeaseStore } from '@thalweg/offset-store';
import type { DqAuditStore } from './dq/dq-audit-store.js';
import type { PipelineConfigInput } from './pipeline-config.js';

/** A record a secondary's derivation refused, with why. Raw still holds it. */
export interface QuarantinedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** The sink whose derivation refused it, or the raw sink for `oversized`. */
  readonly sink: string;
  /** The record as the source delivered it, so a dead-letter writer can keep it whole. */
  readonly key: Uint8Array | null;
  readonly value: Uint8Array;
  readonly headers: SourceHeaders;
  /** The source delivered no value (`value` is empty). */
  readonly tombstone: boolean;
}

export type { MaybePromise, QuarantineNote } from '@thalweg/connector-core';

/**
 * What a secondary makes of a raw batch: its own batch (null when nothing of
 * the span is left to write) and the records it refused. A derivation must be
 * deterministic, because recovery derives the same raw batch again.
 */
export interface Derived<B> {
  readonly batch: B | null;
  readonly quarantined: readonly QuarantineNote[];
  /**
   * What the derivation's data-quality checks found over this span, by check
   * name (a `checked()` derivation fills it; ADR 0026). The pipeline writes
   * it to the dq-audit trail; a plain derivation leaves it out.
   */
  readonly dq?: DqOutcome;
}

/** One check's outcome over a span: rows it passed and rows it failed. */
export interface DqCheckCounts {
  readonly passed: number;
  readonly failed: number;
}

/** Per check name, what it found over one span. */
export type DqOutcome = Readonly<Record<string, DqCheckCounts>>;

/** Raw batch -> what the secondary makes of it; may answer later (a worker thread's derivation). */
export type Derive<B> = (batch: SourceBatch) => MaybePromise<Derived<B>>;

/**
 * One secondary: how to open its sink with the pipeline's confirm target, and
 * how to derive its batches from raw's. Build it with `secondary()` so the
 * compiler checks that the derivation produces what the sink takes.
 */
export interface SecondarySpec<B> {
  readonly open: (confirm: ConfirmTarget<'secondary'>) => MaybePromise<Sink<'secondary', B>>;
  readonly derive: Derive<B>;
}

/** Ties a sink and its derivation to one batch type, then erases it for the list. */
export function secondary<B>(spec: SecondarySpec<B>): SecondarySpec<unknown> {
  return spec;
}

/** Where a quarantined record goes after the pipeline's bounded lane. */
export type QuarantineWriter = (entry: QuarantineEntry<QuarantinedRecord>) => Promise<void>;

/**
 * A topology: one source, one primary-raw sink and any number of
 * secondaries, with the coverage store colocated with raw. The pipeline owns
 * every part from the call to `Pipeline.open` and closes them on shutdown,
 * or when the open fails (reopen them to retry). The same spec runs in
 * any role (`config.recovery.role`); in the `recovery` role the source is
 * never read.
 */
export interface PipelineSpec {
  readonly source: Source;
  /** Cursor keys of a store-managed source use this name (default: the source's cluster). */
  readonly sourceName?: string;
  readonly primaryRaw: (
    confirm: ConfirmTarget<'primary-raw'>,
  ) => MaybePromise<ReplayableSink<SourceBatch>>;
  readonly secondaries?: readonly SecondarySpec<unknown>[];
  readonly coverage: CoverageStore;
  /**
   * Where recovery workers claim windows (the durable tier: Postgres or S3).
   * Needed only when several processes recover the same secondaries; a
   * single recovery worker is the only claimant and needs none.
   */
  readonly leases?: LeaseStore;
  readonly config?: PipelineConfigInput;
  /**
   * The coordination tier (`@thalweg/coordination`) whose expiring set holds
   * content dedup's seen-set; needed only when `config.dedup` names a
   * stream. The caller owns it (the pipeline does not close it), so several
   * pipelines can share one set.
   */
  readonly coordination?: Coordination;
  readonly quarantine?: QuarantineWriter;
  /**
   * The dq-audit trail: where each secondary's data-quality outcomes are
   * recorded, per span and check, durably (ADR 0026). Required when a
   * secondary declares checks (`checked()`); the pipeline owns and closes it.
   */
  readonly dqAudit?: DqAuditStore;
  /** What an operator should see. Default console.info. */
  readonly log?: (line: string) => void;
  /** What explains a run afterwards (where each partition resumed). Default: silent. */
  readonly debug?: (line: string) => void;
  readonly clock?: Clock;
  /**
   * Where the pipeline's periodic work runs: the flow-control cycle, the
   * pause between recovery passes, lease renewals. Node's timers by default;
   * a test passes a `ManualClock` and runs each cycle with `elapse`.
   */
  readonly scheduler?: Scheduler;
  /**
   * The memory flow control reads, in bytes: the live heap and buffers
   * (`liveMemoryBytes`, ADR 0041) by default; injectable so tests can drive
   * memory pressure, or an embedder can read RSS or its cgroup instead.
   */
  readonly memoryUsage?: () => number;
}
