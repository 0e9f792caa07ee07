import { spawn } from 'node:child_process';
import { prometheus } from '@thalweg/test-services';
import { describe, expect, it } from 'vitest';
import { collectMetrics, prometheusText } from '../src/index.js';
import { filesTopology } from './files-topology.js';

/** Runs promtool with `stdin` and resolves with its exit code and output. */
function promtool(args: readonly string[], stdin: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(prometheus().promtool, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
    child.stdin.end(stdin);
  });
}

describe("the exposition, checked by Prometheus's own linter", () => {
  it('passes `promtool check metrics` with every family present', async () => {
    const job = await filesTopology(['{"id":"a","amount":3}', 'not json', '{"id":"b","amount":5}']);
    await job.run();
    const text = prometheusText(collectMetrics(job));
    // The lane histograms are there: raw's and the Zerobus stream's.
    expect(text).toMatch(/thalweg_ack_lane_coalesce_batches_bucket\{sink="raw",/);
    expect(text).toMatch(/thalweg_ack_lane_delivery_latency_seconds_count\{sink="zerobus-orders",/);
    const { code, out } = await promtool(['check', 'metrics'], text);
    expect(out).toBe('');
    expect(code).toBe(0);
  });

  it('is refused by the linter when a family breaks a convention (the check can fail)', async () => {
    const { code } = await promtool(
      ['check', 'metrics'],
      '# HELP thalweg_bad_total a counter typed as a gauge\n# TYPE thalweg_bad_total gauge\nthalweg_bad_total 1\n',
    );
    expect(code).not.toBe(0);
  });
});
