import { partitionKey, sinkId, type SourcePartition } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { Pipeline } from '../src/index.js';
import { MemoryRawSink } from './doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

const RAW = sinkId('raw');
const P1: SourcePartition = { topic: 't', partition: 1 };

/**
 * A store-managed source whose topic grows while it runs (a Pulsar reader
 * when a partition is added): only `visible` partitions are listed and
 * read; `grow` has the registered handler position a new one first, as the
 * real source does, and a rejected handler fails its batches.
 */
class GrowingSource extends MemoryStoreSource {
  private readonly visible = new Set<string>();
  private position: ((partitions: readonly SourcePartition[]) => Promise<void>) | undefined;
  failure: Error | null = null;

  constructor(...args: ConstructorParameters<typeof MemoryStoreSource>) {
    super(...args);
    this.endless = true;
    this.visible.add(partitionKey({ topic: 't', partition: 0 }));
  }

  override partitions(): SourcePartition[] {
    return super.partitions().filter((p) => this.visible.has(partitionKey(p)));
  }

  onPartitionsFound(position: (partitions: readonly SourcePartition[]) => Promise<void>): void {
    this.position = position;
  }

  async grow(partition: SourcePartition): Promise<void> {
    try {
      await this.position?.([partition]);
      this.visible.add(partitionKey(partition));
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Read each round of the base's loop: a failed positioning fails the batches there. */
  protected override readable() {
    if (this.failure !== null) throw this.failure;
    return super.readable().filter(([key]) => this.visible.has(key));
  }
}

function openWith(
  source: GrowingSource,
  coverage: InMemoryCoverage,
  stored?: MemoryRawSink['stored'],
) {
  const raw: MemoryRawSink[] = [];
  const lines: string[] = [];
  const opened = Pipeline.open({
    source,
    coverage,
    log: (line) => lines.push(line),
    primaryRaw: (c) => {
      raw.push(new MemoryRawSink(c, [], 'raw', stored));
      return raw[0]!;
    },
  });
  return { opened, raw: () => raw[0]!, lines };
}

describe('a partition a store-managed source finds while running', () => {
  it('resumes at its stored cursor, is read to its end and committed there', async () => {
    const coverage = new InMemoryCoverage({ sinks: [RAW] });
    // Another process read t/1 up to 30 before (raw holds it: this raw's store is shared).
    await coverage.merge([{ key: { sink: RAW, ...P1 }, ranges: [{ start: 0, end: 30 }] }]);
    await coverage.saveCursor({ source: 'memory', ...P1 }, { kind: 'log-offset', nextOffset: 30 });
    const stored = new Map([
      [partitionKey(P1), new Map(Array.from({ length: 30 }, (_, o) => [o, Buffer.from(`v${o}`)]))],
    ]);
    const source = new GrowingSource(logsOf('t', 2, 60), 10);
    const { opened, raw, lines } = openWith(source, coverage, stored);
    const pipeline = await opened;
    const running = pipeline.run();
    await until(() => raw().holdsPrefix('t', 0, 60));
    expect(source.seeks).toEqual([]);

    await source.grow(P1);
    expect(source.seeks).toEqual([
      { partition: P1, cursor: { kind: 'log-offset', nextOffset: 30 } },
    ]);
    await until(() => raw().holdsPrefix('t', 1, 60));
    await until(
      async () => (await coverage.loadCursor({ source: 'memory', ...P1 }))?.nextOffset === 60,
    );
    await pipeline.stop();
    await running;
    expect(lines).toContain('thalweg pipeline: found t/1');
  });

  it('fails the run, naming the range, when raw lacks what lies below its cursor', async () => {
    const coverage = new InMemoryCoverage({ sinks: [RAW] });
    // Coverage says raw held t/1 [0, 30), but this raw holds none of it: a hole nothing would fill.
    await coverage.merge([{ key: { sink: RAW, ...P1 }, ranges: [{ start: 0, end: 30 }] }]);
    await coverage.saveCursor({ source: 'memory', ...P1 }, { kind: 'log-offset', nextOffset: 30 });
    const source = new GrowingSource(logsOf('t', 2, 60), 10);
    const { opened, raw } = openWith(source, coverage);
    const pipeline = await opened;
    const running = pipeline.run();
    await until(() => raw().holdsPrefix('t', 0, 60));
    await source.grow(P1);
    await expect(running).rejects.toMatchObject({ code: 'TWG_PIPELINE_RAW_HOLE' });
    await expect(running).rejects.toThrow(/t\/1 \[0, 30\)/);
    expect(source.seeks).toEqual([]);
    expect(raw().stored.get(partitionKey(P1))).toBeUndefined();
  });
});
