import {
  ColumnsWriter,
  offsetSpan,
  type OffsetSpan,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type SourceRecord,
  type StoreManagedSource,
} from '@thalweg/connector-core';

/** A store-managed source of JSON records of about `recordBytes` bytes, generated per partition. */
export class BenchSource implements StoreManagedSource {
  readonly regime = 'store-managed';
  readonly origin = { kind: 'replayable' } as const;
  readonly cluster = 'bench';
  private readonly next: number[];
  private readonly pad: string;
  private readonly writer = new ColumnsWriter();

  constructor(
    private readonly partitionCount: number,
    private readonly perPartition: number,
    private readonly batchSize: number,
    recordBytes: number,
    /** The JSON of record `o` of partition `p`, before the padding; `"p":p,"o":o` unless told. */
    private readonly fields: (p: number, o: number) => string = (p, o) => `"p":${p},"o":${o}`,
    /** Batches written as columns (ColumnarBatch), as the Kafka source hands them over. */
    private readonly columnar = false,
  ) {
    this.next = new Array<number>(partitionCount).fill(0);
    this.pad = 'x'.repeat(Math.max(0, recordBytes - 48));
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    for (;;) {
      let produced = false;
      for (let p = 0; p < this.partitionCount && !signal.aborted; p++) {
        const start = this.next[p] ?? 0;
        if (start >= this.perPartition) continue;
        const end = Math.min(this.perPartition, start + this.batchSize);
        const span = offsetSpan('bench', p, start, end);
        this.next[p] = end;
        produced = true;
        if (this.columnar) {
          yield this.columns(p, start, end, span);
          continue;
        }
        const records: SourceRecord[] = [];
        for (let o = start; o < end; o++) {
          records.push({
            offset: o,
            key: null,
            value: Buffer.from(`{${this.fields(p, o)},"pad":"${this.pad}"}`),
            timestamp: 1_700_000_000_000 + o,
            headers: [],
          });
        }
        yield { span, records };
      }
      if (!produced || signal.aborted) return;
    }
  }

  /** Records `[start, end)` of partition `p` written as columns: each value made, then copied in. */
  private columns(p: number, start: number, end: number, span: OffsetSpan): SourceBatch {
    const values: Buffer[] = [];
    let valueBytes = 0;
    for (let o = start; o < end; o++) {
      const value = Buffer.from(`{${this.fields(p, o)},"pad":"${this.pad}"}`);
      values.push(value);
      valueBytes += value.byteLength;
    }
    this.writer.begin({ count: end - start, keyBytes: 0, valueBytes, headerBytes: 0 });
    for (let o = start; o < end; o++) {
      this.writer.append(o, 1_700_000_000_000 + o, null, values[o - start] ?? null, []);
    }
    return this.writer.finish(span);
  }

  partitions(): SourcePartition[] {
    return Array.from({ length: this.partitionCount }, (_, partition) => ({
      topic: 'bench',
      partition,
    }));
  }

  cursorAt(_p: SourcePartition, next: number): SourceCursor {
    return { kind: 'log-offset', nextOffset: next };
  }

  seek(p: SourcePartition, cursor: SourceCursor): void {
    this.next[p.partition] = cursor.nextOffset;
  }

  pause(): void {
    // The bench reads a finite log; pausing is not exercised.
  }

  resume(): void {
    // See pause.
  }

  async close(): Promise<void> {
    this.next.fill(this.perPartition);
  }
}

export function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
