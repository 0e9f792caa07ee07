import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sinkId } from '@thalweg/connector-core';
import {
  CoverageError,
  InMemoryCoverage,
  type CoverageStore,
  type DurableReceipt,
} from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Pipeline, secondary } from '../src/index.js';
import { jsonRows, MemoryRawSink, MemorySecondary } from './doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from './doubles/memory-sources.js';

const RAW = sinkId('raw');
const SEC = sinkId('sec');

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-pipeline-open-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('Pipeline.open', () => {
  it('releases the LevelDB store, the source and raw when it fails, so a retry in the same process opens', async () => {
    const location = join(await tempDir(), 'coverage');
    const firstSource = new MemoryStoreSource(logsOf('t', 1, 20), 5);
    const first = await LevelDbCoverage.open({ location, sinks: [RAW, SEC] });
    let firstRaw: MemoryRawSink | undefined;
    // Fails after the store, the source and raw are open: the secondary cannot be opened.
    const failed = Pipeline.open({
      source: firstSource,
      coverage: first,
      log: () => undefined,
      primaryRaw: (c) => (firstRaw = new MemoryRawSink(c)),
      secondaries: [
        secondary({
          open: () => {
            throw new Error('secondary unreachable');
          },
          derive: jsonRows,
        }),
      ],
    });
    await expect(failed).rejects.toThrow(/secondary unreachable/);
    expect(firstRaw?.closed).toBe(true);
    expect(firstSource.closed).toBe(true);

    // The retry opens the same LevelDB directory again: no LEVEL_LOCKED.
    const again = await LevelDbCoverage.open({ location, sinks: [RAW, SEC] });
    const pipeline = await Pipeline.open({
      source: new MemoryStoreSource(logsOf('t', 1, 20), 5),
      coverage: again,
      log: () => undefined,
      primaryRaw: (c) => new MemoryRawSink(c),
      secondaries: [secondary({ open: (c) => new MemorySecondary(c, 'sec'), derive: jsonRows })],
    });
    const stats = await pipeline.run();
    expect(stats.raw.durableRecords).toBe(20);
    expect(stats.secondaries[0]?.deliveredRecords).toBe(20);
  });

  it('releases the secondaries whose lanes had started when positioning the source fails', async () => {
    const source = new MemoryStoreSource(logsOf('t', 1, 5), 5);
    const store = new InMemoryCoverage({ sinks: [RAW, SEC] });
    store.loadCursor = async () => {
      throw new CoverageError('TWG_COVERAGE_BACKEND', 'cursor table unreachable (injected)');
    };
    let raw: MemoryRawSink | undefined;
    let sec: MemorySecondary | undefined;
    await expect(
      Pipeline.open({
        source,
        coverage: store,
        log: () => undefined,
        primaryRaw: (c) => (raw = new MemoryRawSink(c)),
        secondaries: [
          secondary({ open: (c) => (sec = new MemorySecondary(c, 'sec')), derive: jsonRows }),
        ],
      }),
    ).rejects.toThrow(/cursor table unreachable/);
    expect(raw?.closed).toBe(true);
    expect(sec?.closed).toBe(true);
    expect(source.closed).toBe(true);
  });

  it('releases the store and the source when the config is refused', async () => {
    const location = join(await tempDir(), 'coverage');
    const source = new MemoryStoreSource(logsOf('t', 1, 5), 5);
    const store = await LevelDbCoverage.open({ location, sinks: [RAW] });
    await expect(
      Pipeline.open({
        source,
        coverage: store,
        config: { maxBatchRecs: 10 } as never,
        primaryRaw: (c) => new MemoryRawSink(c),
      }),
    ).rejects.toThrow(/config\.maxBatchRecs: .*unknown key/);
    expect(source.closed).toBe(true);
    const again = await LevelDbCoverage.open({ location, sinks: [RAW] });
    await again.close();
  });
});

describe('a fatal coverage refusal', () => {
  /** A store whose writes are refused as the store's code says no retry can fix. */
  function refusing(inner: CoverageStore): CoverageStore & { attempts: number } {
    const store = Object.create(inner) as CoverageStore & { attempts: number };
    store.attempts = 0;
    store.recordDurable = async (_receipts: readonly DurableReceipt[]) => {
      store.attempts += 1;
      throw new CoverageError(
        'TWG_COVERAGE_SCHEMA_NEWER',
        'stored coverage has schema version 9; this code knows 1',
      );
    };
    return store;
  }

  it('fails the run loudly instead of being retried while run() resolves', async () => {
    const store = refusing(new InMemoryCoverage({ sinks: [RAW, SEC] }));
    const log: string[] = [];
    const pipeline = await Pipeline.open({
      source: new MemoryStoreSource(logsOf('t', 1, 50), 5),
      coverage: store,
      config: { evaluateEveryMs: 5 },
      log: (line) => log.push(line),
      primaryRaw: (c) => new MemoryRawSink(c),
      secondaries: [secondary({ open: (c) => new MemorySecondary(c, 'sec'), derive: jsonRows })],
    });
    const error = await pipeline.run().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'TWG_PIPELINE_COVERAGE_FAILED' });
    expect((error as Error).message).toMatch(/TWG_COVERAGE_SCHEMA_NEWER/);
    expect((error as Error).cause).toBeInstanceOf(CoverageError);
    expect(pipeline.stats().state).toBe('failed');
    expect(log.some((l) => l.includes('retrying next round'))).toBe(false);
  });
});
