import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { prometheus, uniqueName, waitFor } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemo, stopDemos } from './demo-process.js';

interface Series {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}

const env = prometheus();
const targets: string[] = [];
afterEach(async () => {
  await stopDemos();
  await Promise.all(targets.splice(0).map((f) => rm(f, { force: true })));
});

async function query(expr: string): Promise<readonly Series[]> {
  const res = await fetch(`${env.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as { status: string; data: { result: Series[] } };
  expect(body.status, expr).toBe('success');
  return body.data.result;
}

/**
 * Asks Prometheus every 250 ms until `accept` takes the answer to `expr`, and
 * returns that answer; a timeout names the expression, what was wanted of it
 * and the last answer.
 */
async function until(
  expr: string,
  wanted: string,
  accept: (series: readonly Series[]) => boolean,
): Promise<readonly Series[]> {
  let last: readonly Series[] = [];
  await waitFor(
    async () => {
      last = await query(expr);
      return accept(last);
    },
    () => `${expr} to answer ${wanted}; last answer ${JSON.stringify(last)}`,
    { everyMs: 250 },
  );
  return last;
}

describe('a real Prometheus scraping `thalweg demo --port`', () => {
  it('sees per-sink lane series, and sees them move while records flow', async () => {
    const { url } = await startDemo();
    const test = uniqueName('demo');
    const file = join(env.targetsDir, `${test}.json`);
    targets.push(file);
    await writeFile(file, JSON.stringify([{ targets: [new URL(url).host], labels: { test } }]));

    // Every lane of both sinks, each its own series (no label set shared).
    const lanes = await until(
      `thalweg_ack_lane_delivered_batches_total{test="${test}"}`,
      'a series for raw and for zerobus-events',
      (s) => ['raw', 'zerobus-events'].every((sink) => s.some((x) => x.metric['sink'] === sink)),
    );
    const roles = Object.fromEntries(
      lanes.map((s) => [s.metric['sink'] ?? '', s.metric['role'] ?? '']),
    );
    expect(roles).toEqual({ raw: 'primary-raw', 'zerobus-events': 'secondary' });

    // Delivered batches rise between two scrapes, for raw and for the secondary.
    for (const sink of ['raw', 'zerobus-events']) {
      const expr = `thalweg_ack_lane_delivered_batches_total{test="${test}",sink="${sink}"}`;
      const [first] = await until(
        expr,
        'one series above 0',
        (s) => s.length === 1 && Number(s[0]?.value[1]) > 0,
      );
      const before = Number(first?.value[1]);
      await until(expr, `more than ${String(before)}`, (s) => Number(s[0]?.value[1]) > before);
    }

    // The histograms arrive whole: a coalesce quantile can be computed per sink.
    const p50 = await until(
      `histogram_quantile(0.5, sum by (sink, le) (thalweg_ack_lane_coalesce_batches_bucket{test="${test}"}))`,
      'a quantile for each of the two sinks',
      (s) => s.length === 2,
    );
    for (const s of p50) expect(Number(s.value[1])).toBeGreaterThanOrEqual(1);
    const up = await query(`up{test="${test}"}`);
    expect(up.map((s) => s.value[1])).toEqual(['1']);
  }, 60_000);
});
