import { waitFor } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemo, stopDemos } from './demo-process.js';

afterEach(stopDemos);

describe('thalweg demo --port', () => {
  it('serves /metrics, /live and /ready while it runs, and prints the URL', async () => {
    const { url } = await startDemo();
    // Wait for records to flow: the raw sink's series appears once it delivered.
    const delivered = 'thalweg_sink_delivered_records_total{sink="raw",role="primary-raw"}';
    let text = '';
    await waitFor(
      async () => {
        const res = await fetch(`${url}/metrics`);
        text = await res.text();
        const sample = text.split('\n').find((line) => line.startsWith(`${delivered} `));
        return res.status === 200 && Number(sample?.slice(delivered.length + 1)) > 0;
      },
      `${delivered} above 0 on /metrics`,
      // Within the test's own 30 s, so the failure names the series.
      { timeoutMs: 20_000 },
    );
    expect(text).toMatch(/thalweg_sink_delivered_records_total\{sink="zerobus-events"/);
    expect((await fetch(`${url}/live`)).status).toBe(200);
    const ready = await fetch(`${url}/ready`);
    expect([200, 503]).toContain(ready.status);
    expect(await ready.json()).toMatchObject({ probe: 'ready' });
  });
});
