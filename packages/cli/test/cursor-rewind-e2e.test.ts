import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sinkId, type SourceCursor, type SourcePartition } from '@thalweg/connector-core';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { Pipeline } from '@thalweg/pipeline';
import { MANIFEST_FILE, RawSegmentSink } from '@thalweg/sink-files';
import { cursorCommand } from '../src/commands/cursor-command.js';
import { rawCommand } from '../src/commands/raw-command.js';
import { GeneratedSource } from '../src/demo/generated-source.js';

const RAW = sinkId('raw');
const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** The demo's generated source, positioned by log-offset cursors (as Kafka with manual assignment is). */
class LogOffsetSource extends GeneratedSource {
  override cursorAt(_partition: SourcePartition, next: number): SourceCursor {
    return { kind: 'log-offset', nextOffset: next };
  }

  override seek(partition: SourcePartition, cursor: SourceCursor): void {
    if (cursor.kind !== 'log-offset') throw new Error(`not a log-offset cursor: ${cursor.kind}`);
    const next = cursor.nextOffset;
    super.seek(partition, {
      kind: 'page',
      cursor: `${partition.partition}:${next}`,
      watermark: null,
      nextOffset: next,
    });
  }
}

async function ingest(dir: string): Promise<number> {
  const source = new LogOffsetSource({
    topic: 'demo',
    partitions: 1,
    recordsPerPartition: 2000,
    batchSize: 50,
    payloadBytes: 16,
  });
  const pipeline = await Pipeline.open({
    source,
    coverage: await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [RAW] }),
    log: () => undefined,
    config: { maxBatchRecords: 50, recovery: { role: 'ingest' } },
    primaryRaw: async (confirm) =>
      RawSegmentSink.open({
        id: RAW,
        dir: join(dir, 'raw'),
        cluster: source.cluster,
        confirm,
        log: () => undefined,
      }),
    secondaries: [],
  });
  return (await pipeline.run()).source.records;
}

async function run(f: () => Promise<number>): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  try {
    return { code: await f(), out: out.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('a hole in raw, re-read from a store-managed source', () => {
  it('repair, rewind the cursor to the hole, rerun: raw verifies clean and holds the range again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-cli-rewind-e2e-'));
    dirs.push(dir);
    expect(await ingest(dir)).toBe(2000);
    const manifest = await readFile(join(dir, 'raw', MANIFEST_FILE), 'utf8');
    const files = manifest
      .split('\n')
      .slice(1)
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l.slice(9)) as { file: string }).file);
    expect(files.length).toBeGreaterThan(1);
    await rm(join(dir, 'raw', files.at(-1)!));
    expect((await run(() => rawCommand(['verify', '--dir', dir]))).code).toBe(1);

    const repair = await run(() => rawCommand(['repair', '--dir', dir, '--json']));
    const dropped = (JSON.parse(repair.out) as { dropped: { start: number; end: number }[] })
      .dropped;
    const hole = { start: Math.min(...dropped.map((d) => d.start)) };
    expect(hole.start).toBeGreaterThan(0);
    expect(Math.max(...dropped.map((d) => d.end))).toBe(2000);
    // Without the rewind the cursor is past the hole, which nothing would
    // fill: the pipeline refuses to open, naming the range.
    const refused = ingest(dir);
    await expect(refused).rejects.toMatchObject({ code: 'TWG_PIPELINE_RAW_HOLE' });
    await expect(refused).rejects.toThrow(`Rewind the source position to ${hole.start}`);

    const args = ['--dir', dir, '--source', 'generated', '--topic', 'demo', '--partition', '0'];
    const rewind = await run(() => cursorCommand(['rewind', ...args, '--to', String(hole.start)]));
    expect(rewind.out).toContain(`moved from 2000 to ${hole.start}`);
    expect(await ingest(dir)).toBe(2000 - hole.start);

    const verify = await run(() => rawCommand(['verify', '--dir', dir, '--json']));
    expect(verify.code).toBe(0);
    const check = JSON.parse(verify.out) as {
      damage: unknown[];
      partitions: { held: { start: number; end: number }[]; holes: unknown[] }[];
    };
    expect(check.damage).toEqual([]);
    expect(check.partitions.map((p) => [p.held, p.holes])).toEqual([
      [[{ start: 0, end: 2000 }], []],
    ]);
  }, 60_000);
});
