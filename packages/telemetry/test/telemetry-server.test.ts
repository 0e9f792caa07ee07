import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMETHEUS_CONTENT_TYPE, serveTelemetry, telemetryHandlers } from '../src/index.js';
import { filesTopology } from './files-topology.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('serveTelemetry', () => {
  it('serves /metrics, /live and /ready, and 404 elsewhere', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    await job.run();
    const server = await serveTelemetry(job);
    closers.push(() => server.close());

    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
    expect(await metrics.text()).toContain(
      'thalweg_sink_delivered_records_total{sink="zerobus-orders",role="secondary"} 1',
    );

    const live = await fetch(`${server.url}/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ probe: 'live', status: 'pass' });

    // Stopped: not ready, with the reason in the body.
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      probe: 'ready',
      status: 'fail',
      failures: [{ kind: 'not-started' }],
    });

    expect((await fetch(`${server.url}/other`)).status).toBe(404);
  });

  it('answers HEAD without a body and refuses other methods', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    const server = await serveTelemetry(job);
    closers.push(() => server.close());
    const head = await fetch(`${server.url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await job.stop();
  });

  it('mounts under a prefix into a server of the user’s own', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    await job.run();
    const handlers = telemetryHandlers(job, { prefix: '/thalweg' });
    const server = createServer((req, res) => {
      if (handlers.handle(req, res)) return;
      res.writeHead(200);
      res.end('the user’s own route');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    expect((await fetch(`${base}/thalweg/live`)).status).toBe(200);
    expect(await (await fetch(`${base}/thalweg/metrics?x=1`)).text()).toContain(
      'thalweg_health_live 1',
    );
    expect(await (await fetch(`${base}/live`)).text()).toBe('the user’s own route');
  });

  it('reports a port already taken as an error, not a crash', async () => {
    const job = await filesTopology(['{"id":"a","amount":1}']);
    const first = await serveTelemetry(job);
    closers.push(() => first.close());
    await expect(serveTelemetry(job, { port: first.port })).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
    await job.stop();
  });
});
