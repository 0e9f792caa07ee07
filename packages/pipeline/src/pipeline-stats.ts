import type { ByteBudgetStats } from '@thalweg/connector-core';
import type { RecorderStats } from './coverage-recorder.js';
import type { CoordinationHealth } from '@thalweg/coordination';
import type { DedupStats } from './dedup/content-dedup.js';
import type { DqAuditStats } from './dq/dq-audit-recorder.js';
import type { CommitterStats } from './position-committer.js';
import type { RecoveryBacklog } from './recovery/backlog-meter.js';
import type { RecoveryStats } from './recovery/recovery-runner.js';
import type { QuarantineStats } from './quarantine-router.js';
import type { SecondaryStats } from './secondary-stats.js';

export type PipelineState = 'opened' | 'running' | 'stopping' | 'stopped' | 'failed';

export interface PipelineStats {
  readonly state: PipelineState;
  readonly elapsedMs: number;
  readonly source: {
    readonly batches: number;
    readonly records: number;
    readonly bytes: number;
    /**
     * For a source that can neither rewind nor resume (run with
     * `acceptLossWindow`): the records read and not yet durable in raw, which
     * a crash now would lose. Null for every other source: what it loses is
     * read again.
     */
    readonly lossWindowRecords: number | null;
  };
  readonly raw: {
    readonly sink: string;
    readonly submittedBatches: number;
    readonly submittedRecords: number;
    readonly durableBatches: number;
    readonly durableRecords: number;
    /** Acknowledgements of partitions revoked since their spans were read: never applied. */
    readonly droppedAcks: number;
    readonly inflightSpans: number;
    /** Single records larger than the byte budget could grant, written outside it. */
    readonly oversizedPieces: number;
  };
  readonly positions: CommitterStats;
  readonly secondaries: readonly SecondaryStats[];
  readonly coverage: RecorderStats;
  readonly quarantine: QuarantineStats;
  /** The dq-audit trail's recorder: per sink and check, what the checks found (ADR 0026). */
  readonly dq: DqAuditStats;
  /** Content dedup per stream it is on for (ADR 0036); empty when off. */
  readonly dedup: readonly DedupStats[];
  /** The coordination tier's health (ADR 0035), null when the topology has none. */
  readonly coordination: CoordinationHealth | null;

  /** Null when this process does not recover (role `ingest`). */
  readonly recovery: (RecoveryStats & { readonly backlog: RecoveryBacklog }) | null;
  readonly flow: {
    readonly state: string;
    readonly batchFactor: number;
    readonly stuck: string;
    readonly bottleneck: string;
    readonly sourcePaused: boolean;
    readonly budget: ByteBudgetStats;
    /** The channel fill of the last cycle: the fuller of raw's queue and the source's prefetch. */
    readonly channelFill: number;
    /** Raw's segment writes failing in a row at the last cycle. */
    readonly rawWriteFailures: number;
    /** The expansion ratio the budget is charged with (p95 of recent batches, the seed before). */
    readonly expansionRatio: number;
  };
}
