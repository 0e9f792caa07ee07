import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { coverageCommand } from '../src/commands/coverage-command.js';
import { runDemo } from '../src/demo/run-demo.js';

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('thalweg coverage', () => {
  it('reports per sink and partition what is covered, the gaps against raw, and that LevelDB was the only tier', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-cli-coverage-'));
    dirs.push(dir);
    await runDemo({
      dir,
      partitions: 2,
      recordsPerPartition: 500,
      batchSize: 50,
      payloadBytes: 16,
      ackLatencyMs: 1,
      failAtWait: 0,
      malformedEvery: 0,
      progress: () => undefined,
    });
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    expect(await coverageCommand(['--dir', dir, '--json'])).toBe(0);
    const report = JSON.parse(out.join('')) as {
      coverage: { sink: string; lagRecords: number; partitions: { covered: unknown[] }[] }[];
      drift: { tier: string | null; unflushedEntries: number } | null;
    };
    expect(report.coverage.map((s) => [s.sink, s.lagRecords])).toEqual([
      ['raw', 0],
      ['zerobus-events', 0],
    ]);
    expect(report.coverage[1]?.partitions[0]?.covered).toEqual([{ start: 0, end: 500 }]);
    // The demo keeps coverage in LevelDB alone: the durable tier, with no log
    // left growing ("N log entries not yet checkpointed" with nowhere to go).
    expect(report.drift).toMatchObject({ tier: 'durable', unflushedEntries: 0 });
  });

  it('refuses an ambiguous store choice', async () => {
    await expect(coverageCommand(['--dir', '/x', '--postgres', 'postgres://x'])).rejects.toThrow(
      /exactly one of --dir, --leveldb or --postgres/,
    );
  });
});
