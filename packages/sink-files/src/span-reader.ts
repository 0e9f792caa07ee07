import { join } from 'node:path';
import type { OffsetSpan, SourceBatch, SourceRecord } from '@thalweg/connector-core';
import { CursorHeap } from './cursor-heap.js';
import { RawSinkError } from './errors.js';
import type { RawRows } from './raw-envelope.js';
import type { DecodedSegment } from './segment-codec.js';
import type { IndexedBatch, IndexedSegment } from './segment-index.js';

export interface SpanReadDeps {
  readonly dir: string;
  /** The batches of the span's partition overlapping it, from the index. */
  readonly batches: readonly IndexedBatch[];
  /** The partition's durable runs clipped to the span, ascending. */
  readonly runs: readonly OffsetSpan[];
  /** Reads and checks a whole segment file. */
  readonly load: (segment: IndexedSegment) => Promise<DecodedSegment>;
  readonly chunkRecords: number;
  readonly signal: AbortSignal | undefined;
}

interface Cursor {
  readonly batch: IndexedBatch;
  readonly rows: RawRows;
  row: number;
  /** Row index past the last offset inside the span. */
  readonly end: number;
}

/**
 * Reads `span` back: every durable record of its partition with an offset in
 * `[span.start, span.end)`, ascending, each offset once.
 *
 * The batches overlapping the span are merged k-way by offset. A batch is
 * opened only when the merge reaches its span's start (no record of it can
 * come earlier), and a segment file stays loaded only while one of its
 * batches is still being merged, so memory follows the overlap of the data,
 * not the length of the span. The same offset in several batches (a
 * redelivery after a restart) must hold the same record, byte for byte (key,
 * value, timestamp, headers): the first copy written is yielded, and a
 * difference is corruption, reported with both files.
 *
 * Yielded batches tile the durable runs: each covers `[its start, next
 * chunk's first offset)` within a run and ends at the run's end, so offsets
 * raw accounts for without a record (compaction, transaction markers) are
 * covered by the batches a replay records coverage from. A run with no
 * record at all yields one batch with no records.
 */
export async function* readSpan(
  span: OffsetSpan,
  deps: SpanReadDeps,
): AsyncGenerator<SourceBatch, void, undefined> {
  const merge = new OffsetMerge(span, deps);
  let next = await merge.next();
  for (const run of deps.runs) {
    let begin = run.start;
    let chunk: SourceRecord[] = [];
    while (next !== null && next.offset < run.end) {
      if (next.offset < run.start) {
        throw new RawSinkError(
          'TWG_RAW_SEGMENT_CORRUPT',
          `a record lies outside every durable span of ${span.topic}/${span.partition}`,
          { offset: next.offset },
        );
      }
      if (chunk.length >= deps.chunkRecords) {
        deps.signal?.throwIfAborted();
        yield { span: { ...run, start: begin, end: next.offset }, records: chunk };
        begin = next.offset;
        chunk = [];
      }
      chunk.push(next);
      next = await merge.next();
    }
    deps.signal?.throwIfAborted();
    yield { span: { ...run, start: begin }, records: chunk };
  }
  if (next !== null) {
    throw new RawSinkError(
      'TWG_RAW_SEGMENT_CORRUPT',
      `a record lies outside every durable span of ${span.topic}/${span.partition}`,
      { offset: next.offset },
    );
  }
}

/** The k-way merge of the overlapping batches' records, deduplicated by offset. */
class OffsetMerge {
  private readonly pending: IndexedBatch[];
  private nextPending = 0;
  private readonly heap = new CursorHeap<Cursor>(
    (a, b) =>
      a.rows.offset(a.row) < b.rows.offset(b.row) ||
      (a.rows.offset(a.row) === b.rows.offset(b.row) &&
        (a.batch.segment.sequence < b.batch.segment.sequence ||
          (a.batch.segment.sequence === b.batch.segment.sequence &&
            a.batch.position < b.batch.position))),
  );
  /** Loaded segments and how many of their batches the merge has yet to finish. */
  private readonly loaded = new Map<
    IndexedSegment,
    { segment: Promise<DecodedSegment> | null; remaining: number }
  >();

  constructor(
    private readonly span: OffsetSpan,
    private readonly deps: SpanReadDeps,
  ) {
    this.pending = [...deps.batches].sort((a, b) => a.span.start - b.span.start);
    // Nothing is loaded until one of the segment's batches is activated.
    for (const batch of this.pending) {
      const entry = this.loaded.get(batch.segment);
      if (entry === undefined) this.loaded.set(batch.segment, { segment: null, remaining: 1 });
      else entry.remaining++;
    }
  }

  async next(): Promise<SourceRecord | null> {
    for (;;) {
      const top = this.heap.peek();
      const pending = this.pending[this.nextPending];
      if (
        pending !== undefined &&
        (top === undefined || pending.span.start <= top.rows.offset(top.row))
      ) {
        this.nextPending++;
        await this.activate(pending);
        continue;
      }
      if (top === undefined) return null;
      return this.emit();
    }
  }

  private emit(): SourceRecord {
    const first = this.heap.pop() as Cursor;
    const row = first.row;
    const offset = first.rows.offset(row);
    const record = first.rows.record(row);
    this.advance(first);
    for (let top = this.heap.peek(); top !== undefined; top = this.heap.peek()) {
      if (top.rows.offset(top.row) !== offset) break;
      this.heap.pop();
      const differs = first.rows.difference(row, top.rows, top.row);
      if (differs !== null) {
        const a = this.path(first.batch);
        const b = this.path(top.batch);
        throw new RawSinkError(
          'TWG_RAW_RECORD_CONFLICT',
          `${this.span.topic}/${this.span.partition} offset ${offset} is stored in ${a} and in ` +
            `${b} with a different ${differs}: one of the copies is not what the source delivered`,
          { file: b, offset },
        );
      }
      this.advance(top);
    }
    return record;
  }

  private advance(cursor: Cursor): void {
    cursor.row++;
    if (cursor.row < cursor.end) this.heap.push(cursor);
    else this.release(cursor.batch);
  }

  private async activate(batch: IndexedBatch): Promise<void> {
    this.deps.signal?.throwIfAborted();
    const entry = this.loaded.get(batch.segment);
    if (entry === undefined) return;
    entry.segment ??= this.deps.load(batch.segment);
    const decoded = await entry.segment;
    const stored = decoded.batches[batch.position];
    const s = stored?.span;
    if (
      stored === undefined ||
      s?.topic !== batch.span.topic ||
      s.partition !== batch.span.partition ||
      s.start !== batch.span.start ||
      s.end !== batch.span.end
    ) {
      throw new RawSinkError(
        'TWG_RAW_SEGMENT_CORRUPT',
        `batch ${batch.position} is not the one indexed when the segment was written or opened`,
        { file: this.path(batch) },
      );
    }
    const rows = stored.rows;
    const cursor: Cursor = {
      batch,
      rows,
      row: rows.lowerBound(this.span.start),
      end: rows.lowerBound(this.span.end),
    };
    if (cursor.row < cursor.end) this.heap.push(cursor);
    else this.release(batch);
  }

  private release(batch: IndexedBatch): void {
    const entry = this.loaded.get(batch.segment);
    if (entry === undefined) return;
    entry.remaining--;
    if (entry.remaining === 0) this.loaded.delete(batch.segment);
  }

  private path(batch: IndexedBatch): string {
    return join(this.deps.dir, batch.segment.file);
  }
}
