import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildHealthReport, type HealthInputs } from '../../src/flow-control/health-report.js';
import { healthResponse } from '../../src/flow-control/health-response.js';

const stuck: HealthInputs = {
  started: true,
  backpressure: { kind: 'normal', since: 0 },
  stuck: { level: 'unhealthy', since: 3, clearingSince: null },
};

describe('healthResponse', () => {
  it('maps a passing probe to 200 and a failing one to 503, with a JSON body', () => {
    const ok = healthResponse(buildHealthReport({ ...stuck, stuck: { level: 'ok' } }), 'live');
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(ok.body)).toMatchObject({ probe: 'live', status: 'pass', failures: [] });

    const failing = healthResponse(buildHealthReport(stuck), 'live');
    expect(failing.status).toBe(503);
    expect(JSON.parse(failing.body)).toMatchObject({
      status: 'fail',
      failures: [{ kind: 'stuck', level: 'unhealthy', since: 3 }],
      detail: { stuck: 'unhealthy' },
    });
  });

  it('is served by a plain node:http handler in the embedding service', async () => {
    const server = createServer((req, res) => {
      const probe = req.url === '/live' ? 'live' : 'ready';
      const r = healthResponse(buildHealthReport(stuck), probe);
      res.writeHead(r.status, r.headers).end(r.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/live`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ probe: 'live', status: 'fail' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
