import {
  InvalidInputError,
  offsetSpan,
  sourcePartition,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type SourceRecord,
  type StoreManagedSource,
} from '@thalweg/connector-core';

export interface GeneratedSourceOptions {
  readonly topic: string;
  readonly partitions: number;
  readonly recordsPerPartition: number;
  readonly batchSize: number;
  readonly payloadBytes: number;
  /** Every this many records (by offset), one is not JSON: the demo's quarantine traffic. 0: none. */
  readonly malformedEvery?: number;
}

/**
 * A replayable, store-managed source that generates records deterministically
 * from (partition, offset): re-reading from a cursor yields the same bytes,
 * so the record ids of a replay are the ids of the first read.
 */
export class GeneratedSource implements StoreManagedSource {
  readonly regime = 'store-managed';
  readonly origin = { kind: 'replayable' } as const;
  readonly cluster = 'generated';
  private readonly next: number[];
  private readonly paused = new Set<number>();

  constructor(private readonly options: GeneratedSourceOptions) {
    this.next = Array.from({ length: options.partitions }, () => 0);
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    const { topic, partitions, recordsPerPartition, batchSize } = this.options;
    for (;;) {
      let remaining = false;
      for (let p = 0; p < partitions && !signal.aborted; p++) {
        const start = this.next[p] ?? 0;
        if (start >= recordsPerPartition) continue;
        remaining = true;
        if (this.paused.has(p)) continue;
        const end = Math.min(recordsPerPartition, start + batchSize);
        const records: SourceRecord[] = [];
        for (let o = start; o < end; o++) records.push(this.record(p, o));
        this.next[p] = end;
        yield { span: offsetSpan(topic, p, start, end), records };
      }
      if (!remaining || signal.aborted) return;
      // Paused partitions (backpressure) are waited for, never skipped over.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    this.own(partition);
    if (!Number.isSafeInteger(next) || next < 0) {
      throw new InvalidInputError('TWG_POSITION_INVALID', 'next', `${next} is not an offset`);
    }
    return {
      kind: 'page',
      cursor: `${partition.partition}:${next}`,
      watermark: null,
      nextOffset: next,
    };
  }

  partitions(): SourcePartition[] {
    return Array.from({ length: this.options.partitions }, (_, p) =>
      sourcePartition(this.options.topic, p),
    );
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    this.own(partition);
    if (cursor.kind !== 'page' || cursor.cursor !== `${partition.partition}:${cursor.nextOffset}`) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'cursor',
        `generated source cannot resume ${partition.topic}/${partition.partition} from this ${cursor.kind} cursor`,
      );
    }
    this.next[partition.partition] = cursor.nextOffset;
  }

  /** Refuses a partition this source does not generate, naming it. */
  private own(partition: SourcePartition): void {
    const { topic, partitions } = this.options;
    if (
      partition.topic !== topic ||
      !Number.isInteger(partition.partition) ||
      partition.partition < 0 ||
      partition.partition >= partitions
    ) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'partition',
        `${partition.topic}/${partition.partition} is not a partition of the generated source ` +
          `(${topic}/0..${partitions - 1})`,
      );
    }
  }

  pause(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) this.paused.add(p.partition);
  }

  resume(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) this.paused.delete(p.partition);
  }

  async close(): Promise<void> {
    this.next.fill(this.options.recordsPerPartition);
  }

  private record(partition: number, offset: number): SourceRecord {
    const every = this.options.malformedEvery ?? 0;
    const body =
      every > 0 && offset % every === every - 1
        ? `{"partition":${partition},"offset":${offset},"note":` // truncated: not JSON
        : JSON.stringify({ partition, offset, note: 'x'.repeat(this.options.payloadBytes) });
    return {
      offset,
      key: null,
      value: Buffer.from(body, 'utf8'),
      timestamp: 1_700_000_000_000 + offset,
      headers: [],
    };
  }
}
