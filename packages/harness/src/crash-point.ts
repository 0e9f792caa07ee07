import { writeSync } from 'node:fs';
import { HarnessError } from './errors.js';

/** The environment variable through which the parent names the child's kill point. */
export const CRASH_AT_ENV = 'THALWEG_CRASH_AT';

/**
 * The places inside a child where it can kill itself, each at a boundary
 * the design depends on:
 *
 * - `raw-submit`: raw accepted a batch (queued, not durable);
 * - `raw-acked`: raw made a batch durable, and the pipeline has not yet
 *   applied the ack (no position commit, no raw coverage);
 * - `secondary-acked`: Postgres committed the rows and the sink's own
 *   coverage, and the pipeline has not yet recorded the secondary's coverage;
 * - `checkpoint`: the write-behind store is pushing local coverage to the
 *   durable tier (before or after the Postgres write);
 * - `coverage-write`: the pipeline's n-th coverage write (receipts of raw and
 *   the secondary) stalls, as a LevelDB write stall would, and the process
 *   dies during the stall, before the write reached the store;
 * - `recovery-window`: a recovery worker submitted a replayed batch.
 */
export const CRASH_POINTS = [
  'raw-submit',
  'raw-acked',
  'secondary-acked',
  'checkpoint',
  'coverage-write',
  'recovery-window',
] as const;

export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Around the durable tier's merge: dies before the Postgres write, or after it. */
export type CheckpointPhase = 'before' | 'after';

export type CrashAt =
  | { readonly point: Exclude<CrashPoint, 'checkpoint'>; readonly n: number }
  | { readonly point: 'checkpoint'; readonly n: number; readonly phase: CheckpointPhase };

function isCrashPoint(text: string): text is CrashPoint {
  return (CRASH_POINTS as readonly string[]).includes(text);
}

/** `<point>:<n>`, or `checkpoint:<n>:<before|after>`; empty or absent means none. */
export function parseCrashAt(text: string | undefined): CrashAt | null {
  if (text === undefined || text === '') return null;
  const refuse = (why: string): never => {
    throw new HarnessError(
      'TWG_HARNESS_CRASH_AT',
      `${CRASH_AT_ENV}=${JSON.stringify(text)}: ${why}`,
    );
  };
  const [point = '', count = '', phase, ...rest] = text.split(':');
  if (!isCrashPoint(point)) return refuse(`the point must be one of ${CRASH_POINTS.join(', ')}`);
  const n = /^\d+$/.test(count) ? Number(count) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) return refuse('the count must be a positive integer');
  if (rest.length > 0) return refuse('too many fields');
  if (point === 'checkpoint') {
    if (phase !== 'before' && phase !== 'after') {
      return refuse('checkpoint needs a phase: checkpoint:<n>:before or checkpoint:<n>:after');
    }
    return { point, n, phase };
  }
  if (phase !== undefined) return refuse(`${point} takes no phase`);
  return { point, n };
}

export function formatCrashAt(at: CrashAt): string {
  return at.point === 'checkpoint' ? `${at.point}:${at.n}:${at.phase}` : `${at.point}:${at.n}`;
}

/** What the tripwire does when it fires; the child's is `sigkill`. */
export type Die = (at: CrashAt) => void;

/**
 * Dies the way a crashed process dies: no handler, no flush, no close. The
 * line goes out with a synchronous write first, so the parent's log says
 * where the child died.
 */
export const sigkill: Die = (at) => {
  writeSync(2, `thalweg harness child: crash-at ${formatCrashAt(at)} fired, SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
};

/**
 * Counts the occurrences of every crash point in one process and dies at
 * the n-th occurrence of the configured one. The parts of the topology call
 * `pass` at their boundaries (killable-parts.ts); with no crash point set it
 * only counts.
 */
export class Tripwire {
  private readonly counts = new Map<CrashPoint, number>();

  constructor(
    readonly at: CrashAt | null,
    private readonly die: Die,
  ) {}

  /** One occurrence of `point`; `after` is the second half of the same checkpoint, not a new one. */
  pass(point: CrashPoint, phase: CheckpointPhase = 'before'): void {
    if (phase === 'before') this.counts.set(point, this.count(point) + 1);
    const at = this.at;
    if (at?.point !== point || this.count(point) !== at.n) return;
    if (at.point === 'checkpoint' && at.phase !== phase) return;
    this.die(at);
  }

  /** Whether the next occurrence of `point` is the one this tripwire dies at. */
  armedFor(point: CrashPoint): boolean {
    return this.at?.point === point && this.count(point) + 1 === this.at.n;
  }

  count(point: CrashPoint): number {
    return this.counts.get(point) ?? 0;
  }
}
