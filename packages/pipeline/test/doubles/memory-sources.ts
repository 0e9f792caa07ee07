import {
  checkOffset,
  InvalidInputError,
  offsetSpan,
  partitionKey,
  type AssignmentEvent,
  type BrokerManagedSource,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type SourceRecord,
  type StoreManagedSource,
} from '@thalweg/connector-core';

export function makeRecords(
  topic: string,
  partition: number,
  count: number,
  value: (offset: number) => string = (o) => JSON.stringify({ n: o, p: partition }),
): SourceRecord[] {
  return Array.from({ length: count }, (_, offset) => ({
    offset,
    key: null,
    value: new TextEncoder().encode(value(offset)),
    timestamp: 1_700_000_000_000 + offset,
    headers: [],
  }));
}

/** Yields a fixed log per partition in batches, round-robin; ends when all are read. */
abstract class MemorySourceBase {
  readonly origin = { kind: 'replayable' } as const;
  readonly cluster = 'memory';
  readonly paused = new Set<string>();
  readonly pauseCalls: SourcePartition[][] = [];
  protected readonly next = new Map<string, number>();
  closed = false;
  /** Yields batches forever (waiting) once drained, instead of ending. */
  endless = false;
  /** While set, nothing is yielded until it resolves (a group join still in progress). */
  joining: Promise<void> | null = null;

  constructor(
    readonly logs: ReadonlyMap<string, { partition: SourcePartition; records: SourceRecord[] }>,
    readonly batchSize: number,
  ) {}

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    if (this.joining !== null) {
      const aborted = new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      await Promise.race([this.joining, aborted]);
    }
    for (;;) {
      let produced = false;
      for (const [key, log] of this.readable()) {
        // A closed source yields nothing more, as the real ones stop reading.
        if (signal.aborted || this.closed) return;
        if (this.paused.has(key)) continue;
        const start = this.next.get(key) ?? 0;
        if (start >= log.records.length) continue;
        const end = Math.min(log.records.length, start + this.batchSize);
        this.next.set(key, end);
        produced = true;
        const { topic, partition } = log.partition;
        yield {
          span: offsetSpan(topic, partition, start, end),
          records: log.records.slice(start, end),
        };
        await Promise.resolve();
      }
      if (signal.aborted || this.closed) return;
      if (!produced) {
        if (!this.endless && this.paused.size === 0) return;
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  }

  protected readable(): [string, { partition: SourcePartition; records: SourceRecord[] }][] {
    return [...this.logs];
  }

  pause(partitions: readonly SourcePartition[]): void {
    this.pauseCalls.push([...partitions]);
    for (const p of partitions) this.paused.add(partitionKey(p));
  }

  resume(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) this.paused.delete(partitionKey(p));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** The partition as one of this source's; a foreign one is refused, naming it. */
  protected known(partition: SourcePartition): SourcePartition {
    const log = this.logs.get(partitionKey(partition));
    if (log === undefined) {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'partition',
        `${partition.topic}/${partition.partition} is not a partition of this source`,
      );
    }
    return log.partition;
  }
}

export function logsOf(
  topic: string,
  partitions: number,
  perPartition: number,
  value?: (offset: number) => string,
): Map<string, { partition: SourcePartition; records: SourceRecord[] }> {
  const logs = new Map<string, { partition: SourcePartition; records: SourceRecord[] }>();
  for (let p = 0; p < partitions; p++) {
    logs.set(partitionKey({ topic, partition: p }), {
      partition: { topic, partition: p },
      records: makeRecords(topic, p, perPartition, value),
    });
  }
  return logs;
}

export class MemoryStoreSource extends MemorySourceBase implements StoreManagedSource {
  readonly regime = 'store-managed';
  readonly seeks: { partition: SourcePartition; cursor: SourceCursor }[] = [];

  partitions(): SourcePartition[] {
    return [...this.logs.values()].map((l) => l.partition);
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    this.known(partition);
    return { kind: 'log-offset', nextOffset: checkOffset(next, 'next') };
  }

  seek(partition: SourcePartition, cursor: SourceCursor): void {
    this.known(partition);
    if (cursor.kind !== 'log-offset') {
      throw new InvalidInputError(
        'TWG_POSITION_INVALID',
        'cursor.kind',
        `a ${cursor.kind} cursor cannot position a log; expected log-offset`,
      );
    }
    checkOffset(cursor.nextOffset, 'cursor.nextOffset');
    this.seeks.push({ partition, cursor });
    this.next.set(partitionKey(partition), cursor.nextOffset);
  }
}

export class MemoryGroupSource extends MemorySourceBase implements BrokerManagedSource {
  readonly regime = 'broker-managed';
  readonly commits: { partition: SourcePartition; next: number }[] = [];
  readonly owned = new Set<string>();
  commitFailures = 0;
  private listener: ((e: AssignmentEvent) => void) | null = null;

  constructor(
    logs: ReadonlyMap<string, { partition: SourcePartition; records: SourceRecord[] }>,
    batchSize: number,
  ) {
    super(logs, batchSize);
    for (const key of logs.keys()) this.owned.add(key);
  }

  protected override readable(): [
    string,
    { partition: SourcePartition; records: SourceRecord[] },
  ][] {
    return [...this.logs].filter(([key]) => this.owned.has(key));
  }

  async commit(partition: SourcePartition, next: number): Promise<void> {
    checkOffset(next, 'next');
    if (this.commitFailures > 0) {
      this.commitFailures -= 1;
      throw new Error('broker unavailable');
    }
    if (!this.owned.has(partitionKey(partition))) {
      throw new Error(`commit for a partition not owned: ${partitionKey(partition)}`);
    }
    this.commits.push({ partition, next });
  }

  onAssignment(listener: (e: AssignmentEvent) => void): void {
    this.listener = listener;
  }

  /** Simulates a rebalance taking `partition` away, then (optionally) giving it back from `from`. */
  revoke(partition: SourcePartition): void {
    this.owned.delete(partitionKey(partition));
    this.listener?.({ kind: 'revoked', partitions: [partition] });
  }

  assign(partition: SourcePartition, from: number): void {
    this.owned.add(partitionKey(partition));
    this.next.set(partitionKey(partition), from);
    this.listener?.({ kind: 'assigned', partitions: [partition] });
  }

  lastCommit(partition: SourcePartition): number | null {
    const mine = this.commits.filter((c) => partitionKey(c.partition) === partitionKey(partition));
    return mine.at(-1)?.next ?? null;
  }
}
