import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InMemoryCoverage, WriteBehindCoverage } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { cursorCommand } from '../src/commands/cursor-command.js';
import { runDemo } from '../src/demo/run-demo.js';

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function fresh(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-cli-cursor-'));
  dirs.push(dir);
  return dir;
}

function captured(): string[] {
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  return out;
}

const at = { source: 'kafka-assigned', topic: 'events', partition: 2 };
const args = (dir: string, ...more: string[]) => [
  '--dir',
  dir,
  '--source',
  at.source,
  '--topic',
  at.topic,
  '--partition',
  String(at.partition),
  ...more,
];

async function stored(dir: string) {
  const store = await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [] });
  try {
    return await store.loadCursor(at);
  } finally {
    await store.close();
  }
}

describe('thalweg cursor', () => {
  it('rewinds a log-offset cursor in DIR/coverage, and refuses a forward one', async () => {
    const dir = await fresh();
    const store = await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [] });
    await store.saveCursor(at, { kind: 'log-offset', nextOffset: 900 });
    await store.close();
    const out = captured();
    expect(await cursorCommand(['rewind', ...args(dir, '--to', '400')])).toBe(0);
    expect(out.join('')).toContain('kafka-assigned events/2');
    expect(out.join('')).toContain('moved from 900 to 400');
    expect(await stored(dir)).toEqual({ kind: 'log-offset', nextOffset: 400 });

    const forward = cursorCommand(['rewind', ...args(dir, '--to', '401')]);
    await expect(forward).rejects.toMatchObject({ code: 'TWG_COVERAGE_REWIND_REFUSED' });
    await expect(forward).rejects.toThrow(/kafka-assigned events\/2: a rewind to 401 would move/);
    expect(await stored(dir)).toEqual({ kind: 'log-offset', nextOffset: 400 });
    out.length = 0;
    expect(await cursorCommand(['show', ...args(dir, '--json')])).toBe(0);
    expect(JSON.parse(out.join(''))).toEqual({
      key: at,
      cursor: { kind: 'log-offset', nextOffset: 400 },
    });
  });

  it('refuses flags it cannot use, naming them', async () => {
    const dir = await fresh();
    await expect(cursorCommand(['rewind', ...args(dir, '--to', '1.5')])).rejects.toThrow(
      /--to "1.5" is not a non-negative integer/,
    );
    await expect(cursorCommand(['rewind', ...args(dir)])).rejects.toThrow(/--to is required/);
    await expect(cursorCommand(['rewind', ...args(dir, '--to', '4')])).rejects.toThrow(
      /no cursor is stored for kafka-assigned events\/2/,
    );
    await expect(
      cursorCommand(['show', '--source', 's', '--topic', 't', '--partition', '0']),
    ).rejects.toThrow(/give one of --dir, --leveldb or --postgres/);
    await expect(cursorCommand(['move'])).rejects.toThrow(/unknown subcommand "move"/);
  });

  it('refuses to rewind a local tier alone: its durable tier holds the cursor too', async () => {
    const dir = await fresh();
    const local = await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [] });
    const durable = new InMemoryCoverage({ sinks: [] });
    const pair = new WriteBehindCoverage({ local, durable, checkpointIntervalMs: 60_000 });
    await pair.saveCursor(at, { kind: 'log-offset', nextOffset: 900 });
    await pair.close();
    await expect(cursorCommand(['rewind', ...args(dir, '--to', '10')])).rejects.toThrow(
      /served as the local tier of a write-behind store.*--postgres/,
    );
    expect(await stored(dir)).toEqual({ kind: 'log-offset', nextOffset: 900 });
  });

  it("shows the demo's cursor, and refuses to build a cursor of another kind, naming it", async () => {
    const dir = await fresh();
    await runDemo({
      dir,
      partitions: 1,
      recordsPerPartition: 300,
      batchSize: 50,
      payloadBytes: 16,
      ackLatencyMs: 1,
      failAtWait: 0,
      malformedEvery: 0,
      progress: () => undefined,
    });
    const demo = ['--dir', dir, '--source', 'generated', '--topic', 'demo', '--partition', '0'];
    const out = captured();
    expect(await cursorCommand(['show', ...demo])).toBe(0);
    expect(out.join('')).toMatch(/cursor generated demo\/0 .*"kind":"page".*"nextOffset":300/);
    await expect(cursorCommand(['rewind', ...demo, '--to', '100'])).rejects.toThrow(
      /the stored cursor of generated demo\/0 is a page cursor; this command builds only log-offset/,
    );
  });
});
