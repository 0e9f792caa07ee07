import { cp, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MANIFEST_FILE, RawSegmentSink, segmentName } from '@thalweg/sink-files';
import { coverageCommand } from '../src/commands/coverage-command.js';
import { rawCommand } from '../src/commands/raw-command.js';
import { runDemo } from '../src/demo/run-demo.js';

let demo: string;
const dirs: string[] = [];

beforeAll(async () => {
  demo = await mkdtemp(join(tmpdir(), 'twg-cli-raw-demo-'));
  await runDemo({
    dir: demo,
    partitions: 2,
    recordsPerPartition: 2000,
    batchSize: 50,
    payloadBytes: 16,
    ackLatencyMs: 1,
    failAtWait: 0,
    malformedEvery: 0,
    progress: () => undefined,
  });
}, 60_000);
afterAll(() => rm(demo, { recursive: true, force: true }));
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A copy of the demo's directory to damage. */
async function copy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-cli-raw-'));
  dirs.push(dir);
  await cp(demo, dir, { recursive: true });
  return dir;
}

/** The segments the manifest lists, in order. */
async function listed(dir: string): Promise<string[]> {
  const text = await readFile(join(dir, 'raw', MANIFEST_FILE), 'utf8');
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l.slice(9)) as { file: string }).file);
}

/** Runs a command with stdout captured. */
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

interface CoverageJson {
  coverage: {
    sink: string;
    lagRecords: number;
    partitions: { gaps: { start: number; end: number }[] }[];
  }[];
  rawDamage: { code: string; file: string; spans: unknown[] }[];
}

describe('thalweg coverage and raw verify over damaged raw', () => {
  it('reports sound raw as whole: exit 0', async () => {
    const dir = await copy();
    const coverage = await run(() => coverageCommand(['--dir', dir, '--json', '--verify']));
    expect(coverage.code).toBe(0);
    const verify = await run(() => rawCommand(['verify', '--dir', dir]));
    expect(verify.code).toBe(0);
    expect(verify.out).toContain('0 damaged');
  });

  it.each(['middle', 'last'] as const)(
    'finds a deleted %s segment as a hole and exits 1',
    async (which) => {
      const dir = await copy();
      const files = await listed(dir);
      expect(files.length).toBeGreaterThan(2);
      const victim = which === 'last' ? files.at(-1)! : files[Math.floor(files.length / 2)]!;
      await rm(join(dir, 'raw', victim));
      const { code, out } = await run(() => coverageCommand(['--dir', dir, '--json']));
      expect(code).toBe(1);
      const report = JSON.parse(out) as CoverageJson;
      const raw = report.coverage.find((s) => s.sink === 'raw')!;
      expect(raw.lagRecords).toBeGreaterThan(0);
      expect(report.rawDamage.map((d) => [d.code, d.file])).toEqual([
        ['TWG_RAW_SEGMENT_MISSING', join(dir, 'raw', victim)],
      ]);
      expect((await run(() => rawCommand(['verify', '--dir', dir]))).code).toBe(1);
    },
  );

  it('finds a truncated last segment: exit 1', async () => {
    const dir = await copy();
    const last = (await listed(dir)).at(-1)!;
    const file = join(dir, 'raw', last);
    await truncate(file, (await readFile(file)).byteLength - 100);
    const { code } = await run(() => coverageCommand(['--dir', dir]));
    expect(code).toBe(1);
  });

  it('finds a flipped byte with --verify and raw verify, naming file and offsets: exit 1', async () => {
    const dir = await copy();
    const file = join(dir, 'raw', (await listed(dir))[0]!);
    const bytes = await readFile(file);
    const at = Math.floor(bytes.byteLength / 2);
    bytes[at] = (bytes[at] as number) ^ 0xff;
    await writeFile(file, bytes);
    const verify = await run(() => rawCommand(['verify', '--dir', dir]));
    expect(verify.code).toBe(1);
    expect(verify.out).toContain(`TWG_RAW_CHECKSUM_MISMATCH ${file} byte`);
    expect(verify.out).toMatch(/offsets demo\/\d \[\d+, \d+\)/);
    expect(verify.out).toContain('HOLES');
    const coverage = await run(() => coverageCommand(['--dir', dir, '--verify']));
    expect(coverage.code).toBe(1);
    expect(coverage.out).toContain('raw damage: TWG_RAW_CHECKSUM_MISMATCH');
  });

  it('repairs a hole: raw opens again claiming only what it holds', async () => {
    const dir = await copy();
    const files = await listed(dir);
    const victim = files[1]!;
    await rm(join(dir, 'raw', victim));
    await expect(
      RawSegmentSink.open({
        id: 'raw' as never,
        dir: join(dir, 'raw'),
        cluster: 'generated',
        confirm: { apply: async () => undefined },
        log: () => undefined,
        writer: 'inline',
      }),
    ).rejects.toThrow(/TWG_RAW_SEGMENT_MISSING/);
    const repair = await run(() => rawCommand(['repair', '--dir', dir]));
    expect(repair.code).toBe(0);
    expect(repair.out).toMatch(/dropped demo\/\d \[\d+, \d+\)/);
    expect((await run(() => rawCommand(['verify', '--dir', dir]))).out).toContain('0 damaged');
    const sink = await RawSegmentSink.open({
      id: 'raw' as never,
      dir: join(dir, 'raw'),
      cluster: 'generated',
      confirm: { apply: async () => undefined },
      log: () => undefined,
      writer: 'inline',
    });
    expect(sink.segments().map((s) => s.file)).toEqual(files.filter((f) => f !== victim));
    await sink.close();
    expect(segmentName(0)).toBe(files[0]);
  });
});
