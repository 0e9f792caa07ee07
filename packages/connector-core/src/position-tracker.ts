import { InvalidInputError } from './errors.js';
import {
  checkOffset,
  formatSpan,
  offsetSpan,
  partitionKey,
  type OffsetSpan,
  type SourcePartition,
} from './offset-span.js';

interface PartitionLog {
  readonly partition: SourcePartition;
  /** Spans in source order; `head` is the oldest not yet folded into `committable`. */
  readonly spans: { span: OffsetSpan; durable: boolean }[];
  readonly byStart: Map<number, { span: OffsetSpan; durable: boolean }>;
  head: number;
  /** The next offset to read that is safe to commit, or null before any progress. */
  committable: number | null;
}

/**
 * Turns durable acknowledgements, which can arrive out of order (several
 * batches in flight, several streams), into a source position that may lag
 * and never leads: the committable position of a partition is the end of the
 * longest run of registered spans, in source order, that are ALL durable.
 *
 * Spans are registered when read from the source, before submission; a span
 * that was never registered cannot be acknowledged, and a gap between
 * registered spans (compaction, transaction markers) is skipped only because
 * the source itself reported the next span after it.
 */
export class PositionTracker {
  private readonly logs = new Map<string, PartitionLog>();

  /** Registers a span read from the source. Spans of a partition must ascend. */
  register(span: OffsetSpan): void {
    // Spans built by hand (not by offsetSpan) are checked here too: a wrong
    // `end` would otherwise become the committed position.
    offsetSpan(span.topic, span.partition, span.start, span.end);
    const log = this.logFor(span);
    const last = log.spans[log.spans.length - 1];
    const floor = last?.span.end ?? log.committable ?? 0;
    if (span.start < floor) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'span',
        `${formatSpan(span)} overlaps or precedes an already registered offset ${floor}`,
      );
    }
    const entry = { span, durable: false };
    log.spans.push(entry);
    log.byStart.set(span.start, entry);
  }

  /**
   * Marks a registered span durable. Returns the new committable position of
   * its partition when it advanced, otherwise null.
   */
  markDurable(span: OffsetSpan): number | null {
    const log = this.logs.get(partitionKey(span));
    const entry = log?.byStart.get(span.start);
    if (log === undefined || entry === undefined || entry.span.end !== span.end) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'span',
        `${formatSpan(span)} was never registered; acknowledging it could move the position past unread records`,
      );
    }
    entry.durable = true;
    let advanced = false;
    while (log.head < log.spans.length) {
      const next = log.spans[log.head];
      if (next === undefined || !next.durable) break;
      log.committable = next.span.end;
      log.byStart.delete(next.span.start);
      log.head += 1;
      advanced = true;
    }
    if (log.head > 1024 && log.head * 2 > log.spans.length) {
      log.spans.splice(0, log.head);
      log.head = 0;
    }
    return advanced ? log.committable : null;
  }

  committable(partition: SourcePartition): number | null {
    return this.logs.get(partitionKey(partition))?.committable ?? null;
  }

  /** Spans registered but not yet folded into the committable position. */
  pending(partition: SourcePartition): number {
    const log = this.logs.get(partitionKey(partition));
    return log === undefined ? 0 : log.spans.length - log.head;
  }

  /**
   * Forgets a partition this member no longer owns (a rebalance revoked it).
   * Nothing may be committed for it afterwards.
   */
  revoke(partition: SourcePartition): void {
    this.logs.delete(partitionKey(partition));
  }

  /**
   * Starts a partition from a known committed position (after assignment or
   * restart), so spans before it are refused.
   */
  resumeAt(partition: SourcePartition, next: number): void {
    checkOffset(next, 'next');
    const log = this.logFor(partition);
    if (log.spans.length > log.head) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'partition',
        `${partition.topic}/${partition.partition} has spans in flight; resume only an idle partition`,
      );
    }
    // Spans already folded in would otherwise stay the floor for the next
    // register: refusing a resume behind them, accepting spans before `next`.
    log.spans.length = 0;
    log.head = 0;
    log.committable = next;
  }

  partitions(): SourcePartition[] {
    return [...this.logs.values()].map((l) => l.partition);
  }

  private logFor(p: SourcePartition): PartitionLog {
    const key = partitionKey(p);
    let log = this.logs.get(key);
    if (log === undefined) {
      log = {
        partition: { topic: p.topic, partition: p.partition },
        spans: [],
        byStart: new Map(),
        head: 0,
        committable: null,
      };
      this.logs.set(key, log);
    }
    return log;
  }
}
