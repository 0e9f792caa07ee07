import {
  partitionKey,
  pause,
  type Clock,
  type HeldPartition,
  type Scheduler,
  type SinkDescriptor,
  type SourcePartition,
} from '@thalweg/connector-core';
import { RangeSet, type CoverageStore, type CoveredRange } from '@thalweg/offset-store';
import { PipelineError } from './errors.js';

/** How the guard waits for a raw whose reads trail its acknowledgements. */
export interface VisibilityWait {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
}

/** Looks again this often, at most, while raw's reads catch up with what it acknowledged. */
const VISIBILITY_POLL_MS = 1000;

/**
 * Refuses to ingest a partition over a hole in raw that the source will
 * never fill (ADR 0022). A hole is a range the coverage store recorded as
 * raw's (after raw's durable ack) that raw no longer holds: a segment
 * dropped by `thalweg raw repair`, or one moved aside at open. The source
 * resumes at `position`; a hole at or past it is filled again as the
 * source re-reads it (the documented way out: rewind the position to the
 * hole), but a hole below it would stay a hole while raw's coverage and
 * every secondary's recovery plan believed it whole.
 *
 * Checked once per partition, at the first batch after the partition is
 * taken (the position is then known for every regime: a stored cursor or a
 * group offset), before that batch reaches raw. The recorded coverage is read
 * before raw's `held()`: raw's coverage is recorded only after raw's durable
 * ack, so whatever the store recorded, raw held by then, and only a real
 * hole shows. A raw whose reads trail its acknowledgements (a lakehouse
 * table, `recovery.visibleWithinMs`) may not show yet what it acknowledged:
 * the guard looks again until it does, and it is a hole only once it stayed
 * unseen that long.
 */
export class RawHoleGuard {
  private readonly checked = new Set<string>();

  constructor(
    private readonly raw: Pick<SinkDescriptor, 'id' | 'recovery'>,
    private readonly held: { held(): Promise<readonly HeldPartition[]> },
    private readonly coverage: Pick<CoverageStore, 'covered'>,
    private readonly wait?: VisibilityWait,
  ) {}

  /** Whether `partition` still needs its check (cheap: the ingest loop asks per batch). */
  pending(partition: SourcePartition): boolean {
    return !this.checked.has(partitionKey(partition));
  }

  /**
   * Throws TWG_PIPELINE_RAW_HOLE naming the ranges when raw lacks, below
   * `position`, what its coverage recorded; otherwise marks the partition
   * checked. A partition taken again after a revocation is checked again.
   */
  async check(partition: SourcePartition, position: number): Promise<void> {
    const key = partitionKey(partition);
    const holes = await this.unseenFor(partition, position);
    if (holes.length > 0) {
      const ranges = holes.map((h) => `[${h.start}, ${h.end})`).join(', ');
      const within =
        this.raw.recovery.kind === 'readable' ? this.raw.recovery.visibleWithinMs : undefined;
      const waited = within === undefined ? '' : ` (still unseen after ${within} ms)`;
      throw new PipelineError(
        'TWG_PIPELINE_RAW_HOLE',
        `raw ${this.raw.id} no longer holds ${partition.topic}/${partition.partition} ${ranges}${waited}, ` +
          `which its coverage records as written, and the source resumes at ${position}, past ` +
          'it: nothing would ever fill it. Rewind the source position to ' +
          `${holes[0]?.start} (README "When raw has a hole"), then start again`,
      );
    }
    this.checked.add(key);
  }

  /**
   * The holes below `position`, looked for again while raw's reads may
   * still trail what it acknowledged (`visibleWithinMs`): empty as soon as
   * raw shows it all.
   */
  private async unseenFor(partition: SourcePartition, position: number): Promise<CoveredRange[]> {
    const within =
      this.raw.recovery.kind === 'readable' ? this.raw.recovery.visibleWithinMs : undefined;
    let holes = await this.holesBelow(partition, position);
    const wait = this.wait;
    if (holes.length === 0 || within === undefined || wait === undefined) return holes;
    const until = wait.clock.now() + within;
    while (holes.length > 0 && wait.clock.now() < until) {
      await pause(wait.scheduler, Math.min(VISIBILITY_POLL_MS, until - wait.clock.now()));
      holes = await this.holesBelow(partition, position);
    }
    return holes;
  }

  /** Forgets a revoked partition: taken again, it is checked again. */
  forget(partition: SourcePartition): void {
    this.checked.delete(partitionKey(partition));
  }

  /** The recorded-but-not-held ranges of `partition` that start below `position`. */
  async holesBelow(partition: SourcePartition, position: number): Promise<CoveredRange[]> {
    const recorded = await this.coverage.covered({
      sink: this.raw.id,
      topic: partition.topic,
      partition: partition.partition,
    });
    const spans = (await this.held.held()).find(
      (p) => partitionKey(p.partition) === partitionKey(partition),
    )?.spans;
    const held = RangeSet.of((spans ?? []).map((s) => ({ start: s.start, end: s.end })));
    const holes: CoveredRange[] = [];
    for (const r of recorded.ranges()) {
      if (r.start >= position) break;
      holes.push(...held.gaps(r.start, r.end).filter((g) => g.start < position));
    }
    return holes;
  }
}
