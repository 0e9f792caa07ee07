import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDemo, type DemoOptions } from '../src/demo/run-demo.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'twg-cli-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const options = async (over: Partial<DemoOptions> = {}): Promise<DemoOptions> => ({
  dir: await tempDir(),
  partitions: 3,
  recordsPerPartition: 2000,
  batchSize: 100,
  payloadBytes: 32,
  ackLatencyMs: 2,
  failAtWait: 5,
  malformedEvery: 500,
  progress: () => undefined,
  ...over,
});

describe('the demo topology', () => {
  it('lands every record in raw, commits each partition to its end, and repairs nothing', async () => {
    const summary = await runDemo(await options());
    expect(summary.raw_durable).toBe(6000);
    expect(summary.raw_missing).toBe(0);
    expect(summary.cursor_leads).toBe(0);
    expect(summary.raw_overclaimed).toBe(0);
    expect(summary.committed).toEqual({ 'demo/0': 2000, 'demo/1': 2000, 'demo/2': 2000 });
    // 4 malformed records per partition, quarantined for the secondary only
    // (by the live lane, or by recovery re-deriving what the lane shed).
    expect(summary.quarantined).toEqual({ decode: 12 });
    // The dead stream was rebuilt; what the lane shed meanwhile, recovery replayed.
    expect(summary.zerobus_rebuilds).toBe(1);
    expect(summary.recovered).toBe(summary.zerobus_shed);
    expect(summary.coverage_gaps).toEqual({ raw: 0, 'zerobus-events': 0 });
  });

  it('resumes from the stored cursors when run again over the same directory', async () => {
    const first = await options({ failAtWait: 0 });
    await runDemo(first);
    const again = await runDemo({ ...first });
    // Everything was committed: the second run reads nothing new.
    expect(again.records_in).toBe(0);
    expect(again.raw_missing).toBe(0);
    expect(again.committed).toEqual({ 'demo/0': 2000, 'demo/1': 2000, 'demo/2': 2000 });
  });
});
