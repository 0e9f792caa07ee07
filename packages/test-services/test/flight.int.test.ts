import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BASE_TS_MS, flight, flightScript, payloadOf, uniqueName } from '../src/index.js';

const run = promisify(execFile);

// One DoAction through pyarrow's Flight client; prints the action's JSON result.
const DO_ACTION = `import sys, pyarrow.flight as fl
c = fl.connect(sys.argv[1])
print(next(iter(c.do_action(fl.Action(sys.argv[2], sys.argv[3].encode())))).body.to_pybytes().decode())`;

interface ReadBack {
  readonly rows: number;
  readonly batches: number;
  readonly sha256: string;
}

async function action(url: string, type: string, body: unknown): Promise<unknown> {
  const { stdout } = await run(flight().python, ['-c', DO_ACTION, url, type, JSON.stringify(body)]);
  return JSON.parse(stdout) as unknown;
}

async function readBack(url: string, ticket: unknown): Promise<ReadBack> {
  const { stdout } = await run(flight().python, [
    flightScript('read_back.py'),
    JSON.stringify(ticket),
    '--url',
    url,
  ]);
  return JSON.parse(stdout) as ReadBack;
}

/**
 * read_back.py's hash of generated rows first..end-1, computed here from the
 * row ids alone: per column its name, then one line per value (integers in
 * decimal, strings as JSON, timestamps as their epoch milliseconds).
 */
function generatedHash(first: number, end: number): string {
  const hash = createHash('sha256');
  const ids = Array.from({ length: end - first }, (_, i) => first + i);
  hash.update('id\n');
  for (const id of ids) hash.update(`${String(id)}\n`);
  hash.update('payload\n');
  for (const id of ids) hash.update(`${JSON.stringify(payloadOf(id))}\n`);
  hash.update('ts\n');
  for (const id of ids) hash.update(`${String(BASE_TS_MS + id)}\n`);
  return hash.digest('hex');
}

// Proves the service that scripts/services/flight.sh started answers Flight
// calls from pyarrow's own client, and that its rows are the ones a test can
// derive from their ids, before any Flight client of ours is involved.
describe('Arrow Flight service', () => {
  it('serves a generated live stream, resumed at the batch boundary at or below "from"', async () => {
    const { url } = flight();
    const stream = uniqueName('twg-probe');
    expect(await action(url, 'generate', { stream, rows: 50, batch_rows: 10 })).toEqual({
      ok: true,
      stream,
    });

    expect(await readBack(url, { stream })).toEqual({
      rows: 50,
      batches: 5,
      sha256: generatedHash(0, 50),
    });
    // Row 25 is in the batch of rows 20..29: the server restarts there.
    expect(await readBack(url, { stream, from: 25 })).toEqual({
      rows: 30,
      batches: 3,
      sha256: generatedHash(20, 50),
    });
    await action(url, 'drop', { stream });
  });

  it('starts a server of its own on port 0, which prints the port it bound first', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'twg-flight-'));
    const server = spawn(
      flight().python,
      [flightScript('serve.py'), '--data-dir', dataDir, '--port', '0'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
      const port = Number(line);
      expect(Number.isInteger(port) && port > 0).toBe(true);
      const url = `grpc://127.0.0.1:${String(port)}`;
      expect(await action(url, 'drop', { dataset: 'none-yet' })).toEqual({
        ok: true,
        found: false,
      });
    } finally {
      server.kill('SIGKILL');
      await once(server, 'exit');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
