import {
  checkOffset,
  InvalidInputError,
  offsetSpan,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import type { ExpectedLog, SourceContractFactory } from '../src/index.js';

/** Ways to break the reference source, each against one clause of the source contract. */
export interface SourceBreakage {
  readonly swapFirstTwo?: boolean;
  readonly dropHeaders?: boolean;
  readonly ignoreSeek?: boolean;
  readonly yieldAfterClose?: boolean;
  readonly acceptAnyCursor?: boolean;
  readonly gapInSpans?: boolean;
  /** Each span after the first starts at the last offset of the one before. */
  readonly overlapSpans?: boolean;
  /** Declares dense offsets whatever its logs hold. */
  readonly declareDense?: boolean;
}

/** A faithful store-managed source over fixed logs (or, with a breakage, an unfaithful one). */
class ReferenceSource implements StoreManagedSource {
  readonly regime = 'store-managed';
  readonly origin = { kind: 'replayable' } as const;
  readonly cluster = 'reference';
  private readonly next = new Map<number, number>();
  private closed = false;

  constructor(
    private readonly logs: readonly ExpectedLog[],
    private readonly broken: SourceBreakage,
  ) {}

  partitions(): SourcePartition[] {
    return this.logs.map((l) => l.partition);
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    for (const log of this.logs) {
      const { topic, partition } = log.partition;
      const from = this.broken.ignoreSeek === true ? 0 : (this.next.get(partition) ?? 0);
      const all = log.records;
      const first = Math.max(
        0,
        all.findIndex((r) => r.offset >= from),
      );
      const out: SourceBatch[] = [];
      for (let start = first; start < all.length && all[start]!.offset >= from; start += 3) {
        const end = Math.min(all.length, start + 3);
        const records = all.slice(start, end).map((r) => ({
          ...r,
          headers: this.broken.dropHeaders === true ? [] : r.headers,
          timestamp: 0,
        }));
        const gap = this.broken.gapInSpans === true && start > first ? 1 : 0;
        const spanStart =
          this.broken.overlapSpans === true && start > first
            ? all[start - 1]!.offset
            : all[start]!.offset + gap;
        out.push({
          span: offsetSpan(topic, partition, spanStart, all[end - 1]!.offset + 1),
          records: records.slice(gap),
        });
      }
      if (this.broken.swapFirstTwo === true && out.length > 1) out.splice(0, 2, out[1]!, out[0]!);
      for (const b of out) {
        if (signal.aborted || (this.closed && this.broken.yieldAfterClose !== true)) return;
        yield b;
        await new Promise((r) => setImmediate(r));
      }
    }
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    if (this.broken.acceptAnyCursor !== true) this.known(partition);
    return {
      kind: 'log-offset',
      nextOffset: this.broken.acceptAnyCursor === true ? next : checkOffset(next, 'next'),
    };
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    if (this.broken.acceptAnyCursor !== true) {
      this.known(partition);
      if (cursor.kind !== 'log-offset') {
        throw new InvalidInputError(
          'TWG_POSITION_INVALID',
          'cursor.kind',
          `${cursor.kind} is not log-offset`,
        );
      }
    }
    this.next.set(partition.partition, cursor.nextOffset);
  }

  pause(): void {}
  resume(): void {}

  async close(): Promise<void> {
    this.closed = true;
  }

  private known(partition: SourcePartition): void {
    if (
      !this.logs.some(
        (l) =>
          l.partition.topic === partition.topic && l.partition.partition === partition.partition,
      )
    ) {
      throw new InvalidInputError('TWG_POSITION_INVALID', 'partition', 'not read by this source');
    }
  }
}

/**
 * The reference source over fixed logs. With `sparse` offsets record i of a
 * partition is at offset 4i, and each batch's span ends one past its last
 * record, so spans do not touch (as Pulsar's packed ids are).
 */
export function referenceSourceFactory(
  broken: SourceBreakage = {},
  offsets: 'dense' | 'sparse' = 'dense',
): SourceContractFactory {
  const stride = offsets === 'dense' ? 1 : 4;
  return {
    features: {
      partitions: 2,
      keys: true,
      headers: true,
      nullHeaderValues: true,
      tombstones: true,
      cursors: 'any-offset',
      offsets: broken.declareDense === true ? 'dense' : offsets,
    },
    timeoutMs: 4_000,
    seed: async (written) => {
      const logs: ExpectedLog[] = written.map((records, p) => ({
        partition: { topic: 'reference', partition: p },
        records: records.map((r, i) => ({ ...r, offset: i * stride })),
      }));
      return { logs, open: async () => new ReferenceSource(logs, broken) };
    },
  };
}
