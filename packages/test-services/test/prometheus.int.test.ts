import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prometheus, uniqueName, waitFor } from '../src/index.js';

interface QueryAnswer {
  status: string;
  data: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

// The telemetry integration tests rely on this: a test serves /metrics on a
// port of its own, writes a file naming it into the targets directory, and
// Prometheus scrapes it within a few seconds, with no restart or reload.
describe('Prometheus service scrapes the targets a test registers', () => {
  const env = prometheus();
  const test = uniqueName('twg-probe');
  const targetFile = join(env.targetsDir, `${test}.json`);
  let value = 1;
  let server: Server;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/plain; version=0.0.4');
      res.end(`# TYPE thalweg_probe_value gauge\nthalweg_probe_value{sink="probe"} ${value}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await writeFile(
      targetFile,
      JSON.stringify([{ targets: [`127.0.0.1:${port}`], labels: { test } }]),
    );
  });

  afterAll(async () => {
    await rm(targetFile, { force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function query(expr: string): Promise<QueryAnswer> {
    const res = await fetch(`${env.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    expect(res.status).toBe(200);
    return (await res.json()) as QueryAnswer;
  }

  /** Asks the query API every 200 ms until `expr` has a sample equal to `want`. */
  async function seen(expr: string, want: string): Promise<Record<string, string>> {
    let last: QueryAnswer | undefined;
    let hit: Record<string, string> | undefined;
    await waitFor(
      async () => {
        last = await query(expr);
        hit = last.data.result.find((r) => r.value[1] === want)?.metric;
        return hit !== undefined;
      },
      () => `${expr} to answer ${want}; last answer ${JSON.stringify(last)}`,
      { timeoutMs: 20_000, everyMs: 200 },
    );
    return hit ?? {};
  }

  it('answers ready', async () => {
    const res = await fetch(`${env.url}/-/ready`);
    expect(res.status).toBe(200);
  });

  it('scrapes a newly registered target, with its labels, and follows its value', async () => {
    const expr = `thalweg_probe_value{test="${test}"}`;
    const labels = await seen(expr, '1');
    expect(labels).toMatchObject({ sink: 'probe', test, job: 'thalweg' });
    value = 7;
    await seen(expr, '7');
  }, 45_000);
});
