import type { SourceCursor } from '@thalweg/connector-core';
import type { CoverageDelta, CoverageKey, CursorKey } from '../coverage-store.js';

export interface Unflushed {
  /** Highest log sequence included: pass it to `markCheckpointed`. */
  readonly throughSeq: number;
  readonly deltas: readonly CoverageDelta[];
  readonly cursors: readonly { readonly key: CursorKey; readonly cursor: SourceCursor }[];
}

/**
 * What a LevelDB store is to the topology: `durable` when it is the only
 * tier (used directly as the pipeline's store: raw on local disk, coverage
 * colocated with it), `local` when a `WriteBehindCoverage` puts it in front
 * of a durable tier.
 */
export type LevelDbTier = 'durable' | 'local';

export interface LocalDiagnostics {
  /** How this instance serves: see LevelDbTier. */
  readonly tier: LevelDbTier;
  /** How the last process that wrote here served (null if none did, or one before tiers were recorded). */
  readonly lastWrittenAs: LevelDbTier | null;
  readonly destinations: readonly {
    readonly key: CoverageKey;
    readonly ranges: number;
    readonly offsets: number;
    /** Holes between the lowest and highest covered offset: what recovery will replay. */
    readonly innerGaps: readonly { start: number; end: number }[];
  }[];
  /** Log entries recorded here and not yet in the durable tier (none kept by a durable tier). */
  readonly unflushedEntries: number;
  readonly lastCheckpointAt: number | null;
}
