/** One sample of what a long-running topology holds. */
export interface SoakSample {
  readonly soak: 'sample';
  readonly t_s: number;
  /** `ingest` while the source still produces; `catch-up` while recovery repairs what is left. */
  readonly phase: 'ingest' | 'catch-up';
  /** Records raw made durable so far. */
  readonly records: number;
  readonly rss_mb: number;
  readonly heap_mb: number;
  /** What the flow governor reads (`liveMemoryBytes`, ADR 0041): heap in use plus array buffers. */
  readonly live_mb: number;
  /** Open file descriptors of the process (/proc/self/fd). */
  readonly fds: number;
  /** Ranges the coverage store holds, over every destination. */
  readonly coverage_ranges: number;
  /** Log entries the coverage store holds (none where LevelDB is the only tier). */
  readonly coverage_log: number;
  /** Keys in the lease store, whatever their state. */
  readonly lease_keys: number;
  readonly lag: number;
  readonly shed_records: number;
  readonly replayed_records: number;
}

export type Measure =
  'rss_mb' | 'live_mb' | 'fds' | 'coverage_ranges' | 'coverage_log' | 'lease_keys';

/**
 * How much a late sample may exceed the early ones, `early × (1 + ratio) +
 * slack`, for each measure judged; a measure left out is not judged.
 */
export type Tolerances = Readonly<
  Partial<Record<Measure, { readonly ratio: number; readonly slack: number }>>
>;

export const DEFAULT_TOLERANCES: Tolerances = {
  // The heap and allocator breathe; a leak of a few bytes per record over
  // millions of records is far beyond this.
  rss_mb: { ratio: 0.25, slack: 48 },
  live_mb: { ratio: 0.25, slack: 16 },
  fds: { ratio: 0, slack: 4 },
  // Gaps open and close as the lane sheds and recovery repairs them.
  coverage_ranges: { ratio: 0.5, slack: 32 },
  coverage_log: { ratio: 0, slack: 0 },
  lease_keys: { ratio: 0.5, slack: 16 },
};

/**
 * A run of a few seconds: everything but RSS. Over so short a run RSS is
 * still warming up — V8 reserves more heap and the allocator more arenas
 * a second or two in (Node 24: the reserved heap goes from 51 to 91 MiB at
 * about one second), while what is live stays level; a leak of JavaScript
 * objects or buffers shows in `live_mb`. RSS is judged by a soak long enough
 * to be past its warm-up.
 */
export const SHORT_RUN_TOLERANCES: Tolerances = Object.fromEntries(
  Object.entries(DEFAULT_TOLERANCES).filter(([measure]) => measure !== 'rss_mb'),
);

export interface Verdict {
  readonly measure: Measure;
  readonly early_max: number;
  readonly late_max: number;
  readonly bound: number;
  readonly flat: boolean;
}

/**
 * Whether each measure stayed flat after warm-up, over the `ingest` samples
 * (the catch-up at the end is another regime: recovery alone, windows back
 * to back): the first fifth is warm-up, the second fifth the early
 * reference, the last fifth is compared with it. Needs ten samples at least.
 */
export function judgeFlat(all: readonly SoakSample[], tolerances: Tolerances): Verdict[] {
  const samples = all.filter((s) => s.phase === 'ingest');
  if (samples.length < 10) {
    throw new Error(
      `flatness needs at least 10 samples while ingesting, got ${samples.length}: lower --sample-ms`,
    );
  }
  const fifth = Math.floor(samples.length / 5);
  const early = samples.slice(fifth, 2 * fifth);
  const late = samples.slice(samples.length - fifth);
  return (Object.keys(tolerances) as Measure[]).map((measure) => {
    const { ratio, slack } = tolerances[measure] ?? { ratio: 0, slack: 0 };
    const earlyMax = Math.max(...early.map((s) => s[measure]));
    const lateMax = Math.max(...late.map((s) => s[measure]));
    const bound = earlyMax * (1 + ratio) + slack;
    return { measure, early_max: earlyMax, late_max: lateMax, bound, flat: lateMax <= bound };
  });
}
