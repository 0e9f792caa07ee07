import {
  checkOffset,
  InvalidInputError,
  NO_HEADERS,
  offsetSpan,
  sourcePartition,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type SourceRecord,
  type StoreManagedSource,
} from '@thalweg/connector-core';

/**
 * The soak's source: `records` records over `partitions` partitions in
 * batches of `batchSize`, generated from (partition, offset) so a re-read
 * yields the same bytes. One payload buffer is shared by every record: the
 * soak measures what the topology keeps, and a source that allocated per
 * record would only add garbage to the RSS series.
 */
export class SoakSource implements StoreManagedSource {
  readonly regime = 'store-managed';
  readonly origin = { kind: 'replayable' } as const;
  readonly cluster = 'soak';
  private readonly next: number[];
  private readonly paused = new Set<number>();
  private readonly perPartition: number;
  private readonly payload: Uint8Array;

  constructor(
    private readonly topic: string,
    partitions: number,
    records: number,
    private readonly batchSize: number,
    payloadBytes: number,
  ) {
    this.perPartition = Math.ceil(records / partitions);
    this.next = Array.from({ length: partitions }, () => 0);
    this.payload = new Uint8Array(payloadBytes).fill(0x61);
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    for (;;) {
      let remaining = false;
      for (let p = 0; p < this.next.length && !signal.aborted; p++) {
        const start = this.next[p] ?? 0;
        if (start >= this.perPartition) continue;
        remaining = true;
        if (this.paused.has(p)) continue;
        const end = Math.min(this.perPartition, start + this.batchSize);
        const records: SourceRecord[] = [];
        for (let o = start; o < end; o++) {
          records.push({
            offset: o,
            key: null,
            value: this.payload,
            timestamp: o,
            headers: NO_HEADERS,
          });
        }
        this.next[p] = end;
        yield { span: offsetSpan(this.topic, p, start, end), records };
      }
      if (!remaining || signal.aborted) return;
      // Paused partitions (backpressure) are waited for, never skipped over.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    this.known(partition);
    return { kind: 'log-offset', nextOffset: checkOffset(next, 'next') };
  }

  partitions(): SourcePartition[] {
    return this.next.map((_, p) => sourcePartition(this.topic, p));
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    this.known(partition);
    if (cursor.kind !== 'log-offset') {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'cursor.kind',
        `a ${cursor.kind} cursor cannot position the soak's log; expected log-offset`,
      );
    }
    this.next[partition.partition] = checkOffset(cursor.nextOffset, 'cursor.nextOffset');
  }

  /** A partition of this source; any other is refused, naming it. */
  private known(partition: SourcePartition): void {
    const p = partition.partition;
    if (partition.topic !== this.topic || !Number.isInteger(p) || p < 0 || p >= this.next.length) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'partition',
        `${partition.topic}/${p} is not a partition of the soak source`,
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
    this.next.fill(this.perPartition);
  }
}
