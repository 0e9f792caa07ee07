import type { Coordination } from '@thalweg/coordination';
import type {
  Clock,
  MaybePromise,
  PartStats,
  RawPart,
  Scheduler,
  SecondaryPart,
  SinkId,
  SourcePart,
} from '@thalweg/connector-core';
import type { CoverageStore, LeaseStore } from '@thalweg/offset-store';
import type { PipelineConfigInput } from '../pipeline-config.js';
import type { PipelineStats } from '../pipeline-stats.js';
import type { QuarantineWriter } from '../topology.js';

/** Secondaries, each declared once under its id. */
export type SecondaryParts = Readonly<Record<string, SecondaryPart>>;

/**
 * A topology declared once (ADR 0029): each part under its role, each
 * secondary under its id. `openTopology` opens them; the pipeline derives
 * the coverage store's sink list and the per-lane settings from what is
 * declared here, and hands every part the source's cluster and the one
 * logger.
 */
export interface TopologyDeclaration<R extends RawPart, S extends SecondaryParts> {
  /** Where records come from; its cluster is hashed into every record id. */
  readonly source: SourcePart;
  /** The primary-raw sink: its durable acknowledgement alone advances the source position. */
  readonly raw: R;
  /** Secondary sinks by id (letters, digits, `.`, `_`, `-`), each with its derivation from raw. */
  readonly secondaries?: S;
  /**
   * The coverage store, opened for the topology's sink ids (raw's first).
   * Default: LevelDB in the raw part's coverage home, next to raw; needs
   * `classic-level` installed.
   */
  readonly coverage?: (sinks: readonly SinkId[]) => MaybePromise<CoverageStore>;
  /** Where recovery workers claim windows, when several processes recover the same secondaries. */
  readonly leases?: LeaseStore;
  /**
   * The coordination tier whose expiring set content dedup shares
   * (`config.dedup`, ADR 0036); the caller opens and closes it.
   */
  readonly coordination?: Coordination;
  /** The pipeline's settings; per-lane settings go with each secondary part (`lane`). */
  readonly config?: Omit<PipelineConfigInput, 'secondaries'>;
  /** Cursor keys of a store-managed source use this name (default: the source's cluster). */
  readonly sourceName?: string;
  /** Where a quarantined record goes after the pipeline's bounded lane. */
  readonly quarantine?: QuarantineWriter;
  /** What an operator should see, from the pipeline and every part. Default console.info. */
  readonly log?: (line: string) => void;
  /** Each part's effective settings, logged once at open. Default: silent. */
  readonly debug?: (line: string) => void;
  readonly clock?: Clock;
  /** Where periodic work runs (Node's timers by default; a ManualClock in tests). */
  readonly scheduler?: Scheduler;
  /**
   * The memory flow control reads, in bytes: the live heap and buffers
   * (`liveMemoryBytes`, ADR 0041) by default; injectable so tests can drive
   * memory pressure, or an embedder can read RSS or its cgroup instead.
   */
  readonly memoryUsage?: () => number;
}

/** The pipeline's statistics, with each declared sink's own, typed by its part. */
export interface TopologyStats<R, S> extends PipelineStats {
  /** The primary-raw sink's own statistics (null until it opened). */
  readonly rawSink: PartStats<R> | null;
  /** Each secondary's own statistics by id (null until it opened). */
  readonly sinks: { readonly [K in keyof S]: PartStats<S[K]> | null };
}
