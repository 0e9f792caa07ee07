import { afterEach, describe, expect, it } from 'vitest';
import { startDemo, stopDemos } from './demo-process.js';

afterEach(stopDemos);

describe('thalweg demo --port', () => {
  it('serves /metrics, /live and /ready while it runs, and prints the URL', async () => {
    const { url } = await startDemo();
    // Wait for records to flow: the raw sink's series appears once it delivered.
    let text: string;
    for (;;) {
      const res = await fetch(`${url}/metrics`);
      if (res.status === 200) {
        text = await res.text();
        if (
          /thalweg_sink_delivered_records_total\{sink="raw",role="primary-raw"\} [1-9]/.test(text)
        )
          break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(text).toMatch(/thalweg_sink_delivered_records_total\{sink="zerobus-events"/);
    expect((await fetch(`${url}/live`)).status).toBe(200);
    const ready = await fetch(`${url}/ready`);
    expect([200, 503]).toContain(ready.status);
    expect(await ready.json()).toMatchObject({ probe: 'ready' });
  });
});
