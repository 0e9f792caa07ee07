import {
  partitionKey,
  type HeldPartition,
  type OffsetSpan,
  type Source,
  type SourcePartition,
  type SourceCursor,
  type SourceThrottle,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import type { GatingState } from './gating-state.js';
import type { RawHoleGuard } from './raw-hole-guard.js';
import type { LiveReach } from './recovery/live-reach.js';

/**
 * A store-managed source resumes from its stored cursors; the tracker starts
 * there too. Its positions are known now, so a hole in raw below one of them
 * refuses the open (a broker-managed source's are known at its first batch).
 * Partitions the source finds later are positioned the same way before it
 * reads them, and told the throttle's current wish.
 */
export async function positionSource(
  source: Source,
  at: PartitionPositioning,
  throttle: SourceThrottle,
  log: (line: string) => void,
): Promise<void> {
  if (source.regime !== 'store-managed') return;
  for (const p of source.partitions()) await positionPartition(source, p, at);
  source.onPartitionsFound?.(async (partitions) => {
    for (const p of partitions) await positionPartition(source, p, at);
    if (throttle.paused) source.pause(partitions);
    else source.resume(partitions);
    log(`found ${partitions.map((p) => `${p.topic}/${p.partition}`).join(', ')}`);
  });
}

/** What positioning a store-managed partition reads and moves. */
export interface PartitionPositioning {
  readonly sourceName: string;
  readonly coverage: CoverageStore;
  readonly gating: GatingState;
  readonly holes: RawHoleGuard;
  readonly reach: LiveReach;
  readonly raw: { held(): Promise<readonly HeldPartition[]> };
  readonly debug: (line: string) => void;
}

/** Raw's spans of `p`, ascending by start. */
async function heldSpans(
  raw: PartitionPositioning['raw'],
  p: SourcePartition,
): Promise<readonly OffsetSpan[]> {
  const key = partitionKey(p);
  const spans: OffsetSpan[] = [];
  for (const held of await raw.held()) {
    if (partitionKey(held.partition) === key) spans.push(...held.spans);
  }
  return spans.sort((a, b) => a.start - b.start);
}

/** One past the last offset raw holds of `p` (0 when it holds none). */
function rawEnd(spans: readonly OffsetSpan[]): number {
  return spans.reduce((end, span) => Math.max(end, span.end), 0);
}

/** The end of the run raw holds of `p` without a hole from `from` on (`from` if it holds none there). */
function heldRunEnd(spans: readonly OffsetSpan[], from: number): number {
  let end = from;
  for (const span of spans) {
    if (span.start > end) break;
    end = Math.max(end, span.end);
  }
  return end;
}

/**
 * A stream's cursor moved to row `end`: its token (which stream) kept, only
 * the next row changed. A kind whose other fields place the position (a
 * page, a file) is kept as it is: its source reads those rows again.
 */
function movedTo(cursor: SourceCursor, end: number): SourceCursor {
  if (cursor.kind === 'stream-token' || cursor.kind === 'log-offset') {
    return { ...cursor, nextOffset: end };
  }
  return cursor;
}

async function positionPartition(
  source: StoreManagedSource,
  p: SourcePartition,
  at: PartitionPositioning,
): Promise<void> {
  const { sourceName, coverage, gating, holes, reach, debug } = at;
  let cursor = await coverage.loadCursor({
    source: sourceName,
    topic: p.topic,
    partition: p.partition,
  });
  await holes.check(p, cursor?.nextOffset ?? 0);
  if (source.origin.kind !== 'replayable') {
    const spans = await heldSpans(at.raw, p);
    const from = cursor?.nextOffset ?? 0;
    if (!source.origin.resumable) {
      // A stream that cannot resume starts anew: its rows are numbered on
      // from past everything raw holds, never over it. The cursor lags raw,
      // and rows of the stream before the crash hold those offsets in raw.
      const end = rawEnd(spans);
      if (end > from) cursor = source.cursorAt(p, end);
    } else {
      // A stream that can resume is asked for the row after the run raw
      // holds from the cursor on, not for rows raw already holds: the
      // producer would send them again under another arrival time, a
      // second copy raw would refuse as a conflict. Recovery replays them
      // to the secondaries from raw (the live reach starts past them).
      const end = heldRunEnd(spans, from);
      if (end > from) cursor = cursor === null ? source.cursorAt(p, end) : movedTo(cursor, end);
    }
  }
  // Read again from here, if the origin can send it again: recovery
  // leaves what is past it to the live lanes (ADR 0030).
  const again = source.origin.kind === 'replayable' || source.origin.resumable;
  if (again) reach.resumeAt(p, cursor?.nextOffset ?? 0);
  if (cursor === null) return;
  source.seek(p, cursor);
  gating.tracker.resumeAt(p, cursor.nextOffset);
  gating.committer.resumeAt(p, cursor.nextOffset);
  debug(`${p.topic}/${p.partition} resumes at ${cursor.nextOffset} (${cursor.kind} cursor)`);
}
