import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  partitionKey,
  recordIdHex,
  sinkId,
  type SecondaryPart,
  type SinkContext,
  type SinkId,
  type SourcePart,
} from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { rawSegments } from '@thalweg/sink-files';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openTopology, PipelineError } from '../../src/index.js';
import { MemorySecondary, type MemoryRow } from '../doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from '../doubles/memory-sources.js';

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-open-topology-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function memorySource(source: MemoryStoreSource): SourcePart<MemoryStoreSource> {
  return { role: 'source', open: () => source };
}

interface RowsStats {
  readonly rows: number;
}

/** A secondary part over the in-memory sink: each row is its record's id, as the library gives it. */
function memoryRows(
  opened: MemorySecondary[] = [],
  extra: Partial<SecondaryPart<MemoryRow[], RowsStats>> = {},
): SecondaryPart<MemoryRow[], RowsStats> {
  return {
    role: 'secondary',
    open: (context) => {
      const sink = new MemorySecondary(context.confirm, context.id);
      opened.push(sink);
      return {
        sink,
        derive: (batch, derive) => {
          const rows: MemoryRow[] = [];
          for (const r of batch.records) {
            const text = new TextDecoder().decode(r.value);
            if (text.includes('"n":3,')) {
              derive.quarantine(r, 'contract', `offset ${r.offset}: n 3 is refused`);
              continue;
            }
            rows.push({ offset: r.offset, text: derive.recordId(r).toString('hex') });
          }
          return rows.length === 0 ? null : rows;
        },
        stats: () => ({ rows: sink.rows.size }),
      };
    },
    ...extra,
  };
}

describe('openTopology', () => {
  it('opens each part once under its declared id, with the source cluster, and keeps coverage in LevelDB next to raw', async () => {
    const dir = await tempDir();
    const source = new MemoryStoreSource(logsOf('t', 2, 10), 4);
    const sinks: MemorySecondary[] = [];
    const info: string[] = [];
    const debug: string[] = [];
    const job = await openTopology({
      source: memorySource(source),
      raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
      secondaries: { 'rows-a': memoryRows(sinks), 'rows-b': memoryRows(sinks) },
      config: { evaluateEveryMs: 5 },
      log: (line) => info.push(line),
      debug: (line) => debug.push(line),
    });
    const stats = await job.run();

    expect(stats.raw.durableRecords).toBe(20);
    expect(stats.rawSink?.segmentsWritten).toBeGreaterThan(0);
    expect(stats.sinks['rows-a']).toEqual({ rows: 18 });
    expect(stats.sinks['rows-b']).toEqual({ rows: 18 });
    expect(stats.quarantine.byReason.contract).toBe(4);
    expect(sinks.map((s) => s.descriptor.id)).toEqual(['rows-a', 'rows-b']);
    // The ids the derivation was handed are raw's: the source's cluster, never one of its own.
    const row = sinks[0]?.rows.get('1:7');
    const value = source.logs.get(partitionKey({ topic: 't', partition: 1 }))?.records[7]?.value;
    expect(row?.text).toBe(
      recordIdHex({ cluster: 'memory', topic: 't', partition: 1, offset: 7, payload: value! }),
    );
    // Settings go to debug, once; nothing of them reaches the operator's log.
    expect(debug.some((l) => l.includes('sink-files raw: dir='))).toBe(true);
    expect(info.some((l) => l.includes('dir='))).toBe(false);

    // The default store is LevelDB in <raw dir>-coverage, holding every declared sink.
    await access(join(dir, 'raw-coverage'));
    const coverage = await LevelDbCoverage.open({
      location: join(dir, 'raw-coverage'),
      sinks: [sinkId('raw'), sinkId('rows-a'), sinkId('rows-b')],
    });
    onTestFinished(() => coverage.close());
    const covered = await coverage.covered({ sink: sinkId('rows-a'), topic: 't', partition: 0 });
    expect(covered.ranges()).toEqual([{ start: 0, end: 10 }]);
  });

  it('opens a given coverage store for the declared ids, raw first', async () => {
    const dir = await tempDir();
    let asked: readonly SinkId[] = [];
    const job = await openTopology({
      source: memorySource(new MemoryStoreSource(logsOf('t', 1, 5), 5)),
      raw: rawSegments({ id: 'landing', dir: join(dir, 'raw'), writer: 'inline' }),
      secondaries: { pg: memoryRows() },
      coverage: (sinks) => {
        asked = sinks;
        return new InMemoryCoverage({ sinks });
      },
      log: () => undefined,
    });
    const stats = await job.run();
    expect(asked).toEqual(['landing', 'pg']);
    expect(stats.raw.sink).toBe('landing');
    expect(stats.sinks.pg).toEqual({ rows: 4 });
  });

  it('refuses lane settings given under config.secondaries, where the id would be written twice', async () => {
    const dir = await tempDir();
    const source = new MemoryStoreSource(logsOf('t', 1, 5), 5);
    const config = { secondaries: { pg: { maxQueuedBatches: 4 } } };
    const opening = openTopology({
      source: memorySource(source),
      raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
      secondaries: { pg: memoryRows() },
      // A JavaScript caller the compiler never saw.
      config: config as object,
      log: () => undefined,
    });
    await expect(opening).rejects.toThrow(/config\.secondaries: declare lane settings with each/);
    expect(source.closed).toBe(false);
  });

  it('refuses an id that is not a sink id, naming where it was declared', async () => {
    const dir = await tempDir();
    const opening = openTopology({
      source: memorySource(new MemoryStoreSource(logsOf('t', 1, 5), 5)),
      raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
      secondaries: { 'pg events': memoryRows() },
      log: () => undefined,
    });
    await expect(opening).rejects.toThrow(PipelineError);
    await expect(opening).rejects.toThrow(/secondaries\["pg events"\]/);
  });

  it('closes the source and the default store when a part cannot open, so a retry opens the same directories', async () => {
    const dir = await tempDir();
    const source = new MemoryStoreSource(logsOf('t', 1, 5), 5);
    const broken: SecondaryPart<MemoryRow[], RowsStats> = {
      role: 'secondary',
      open: () => {
        throw new Error('secondary unreachable');
      },
    };
    const declaration = {
      raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
      log: () => undefined,
    };
    await expect(
      openTopology({ ...declaration, source: memorySource(source), secondaries: { pg: broken } }),
    ).rejects.toThrow(/secondary unreachable/);
    expect(source.closed).toBe(true);

    const again = await openTopology({
      ...declaration,
      source: memorySource(new MemoryStoreSource(logsOf('t', 1, 5), 5)),
      secondaries: { pg: memoryRows() },
    });
    expect((await again.run()).raw.durableRecords).toBe(5);
  });

  it("releases what a part opened besides its sink once the run ends, and applies the part's lane settings", async () => {
    const dir = await tempDir();
    let released = 0;
    const job = await openTopology({
      source: memorySource(new MemoryStoreSource(logsOf('t', 1, 5), 5)),
      raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
      secondaries: {
        pg: {
          role: 'secondary',
          lane: { maxQueuedBatches: 1 },
          open: async (context: SinkContext<'secondary'>) => {
            const opened = await memoryRows().open(context);
            return {
              ...opened,
              release: () => {
                released += 1;
                return Promise.resolve();
              },
            };
          },
        },
      },
      log: () => undefined,
    });
    await job.run();
    expect(released).toBe(1);
    await job.stop();
    expect(released).toBe(1);
  });

  it('tells every part the memory limit the config declares, or the default', async () => {
    const told = async (config?: { memoryLimitBytes: number }) => {
      const dir = await tempDir();
      const limits: number[] = [];
      const job = await openTopology({
        source: {
          role: 'source',
          open: (context) => {
            limits.push(context.memoryLimitBytes);
            return new MemoryStoreSource(logsOf('t', 1, 1), 1);
          },
        },
        raw: rawSegments({ dir: join(dir, 'raw'), writer: 'inline' }),
        secondaries: {
          pg: {
            role: 'secondary',
            open: (context: SinkContext<'secondary'>) => {
              limits.push(context.memoryLimitBytes);
              return memoryRows().open(context);
            },
          },
        },
        ...(config === undefined ? {} : { config }),
        log: () => undefined,
      });
      await job.run();
      return limits;
    };
    expect(await told()).toEqual([1024 * 1024 * 1024, 1024 * 1024 * 1024]);
    expect(await told({ memoryLimitBytes: 256 * 1024 * 1024 })).toEqual([
      256 * 1024 * 1024,
      256 * 1024 * 1024,
    ]);
  });
});

// What must not compile: a sink id that was not declared, lane settings in the pipeline config.
export async function typeChecks(): Promise<unknown[]> {
  const job = await openTopology({
    source: memorySource(new MemoryStoreSource(logsOf('t', 1, 1), 1)),
    raw: rawSegments({ dir: '/nowhere' }),
    secondaries: { pg: memoryRows() },
  });
  const rows: number | undefined = job.stats().sinks.pg?.rows;
  // @ts-expect-error only declared ids have statistics
  const undeclared: unknown = job.stats().sinks.zerobus;
  await openTopology({
    source: memorySource(new MemoryStoreSource(logsOf('t', 1, 1), 1)),
    raw: rawSegments({ dir: '/nowhere' }),
    // @ts-expect-error lane settings go with the part
    config: { secondaries: {} },
  });
  return [rows, undeclared];
}
