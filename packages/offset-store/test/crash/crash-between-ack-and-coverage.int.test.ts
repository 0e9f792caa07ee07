import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sinkId } from '@thalweg/connector-core';
import { postgresUrl, uniqueIdentifier } from '@thalweg/test-services';
import { PostgresCoverage } from '../../src/postgres/postgres-coverage.js';

const writer = fileURLToPath(
  new URL('../../dist-test/test/crash/crash-writer.js', import.meta.url),
);
const pool = new pg.Pool({ connectionString: postgresUrl() });
const schema = uniqueIdentifier('twg_crash');
let localDir = '';

afterAll(async () => {
  await pool.query(`drop schema if exists "${schema}" cascade`);
  await pool.end();
  if (localDir !== '') await rm(localDir, { recursive: true, force: true });
});

/**
 * Runs the writer until it reports the durable ack of batch `killAt` (or to
 * the end if null), SIGKILLs it right there, before the coverage write.
 */
async function runWriter(batches: number, killAt: number | null): Promise<'killed' | 'done'> {
  const child = spawn(
    process.execPath,
    [writer, postgresUrl(), schema, localDir, String(batches)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'done') {
      child.stdin.end();
      break;
    }
    const acked = Number(line.replace('acked ', ''));
    if (killAt !== null && acked >= killAt) {
      child.kill('SIGKILL');
      await exited;
      return 'killed';
    }
    child.stdin.write('record\n');
  }
  await exited;
  return 'done';
}

describe('a writer killed between the sink ack and the coverage write', () => {
  it('leaves coverage lagging (a gap) and never leading', async () => {
    if (!existsSync(writer))
      throw new Error(`${writer} is missing: run \`pnpm build\` (tsc -b) first`);
    localDir = await mkdtemp(join(tmpdir(), 'twg-crash-'));
    // The durable tier's tables, and the sink's own table.
    await (await PostgresCoverage.open({ pool, schema, sinks: [sinkId('pg-sink')] })).close();
    await pool.query(`create table "${schema}".sink_rows (o bigint primary key)`);

    const kills = [30, 70, 120];
    for (const k of kills) expect(await runWriter(20, k)).toBe('killed');
    expect(await runWriter(20, null)).toBe('done');

    const store = await PostgresCoverage.open({ pool, schema, sinks: [sinkId('pg-sink')] });
    const covered = await store.covered({ sink: sinkId('pg-sink'), topic: 'orders', partition: 0 });
    const rows = new Set(
      (await pool.query<{ o: string }>(`select o from "${schema}".sink_rows`)).rows.map((r) =>
        Number(r.o),
      ),
    );
    expect(rows.size).toBe(200);
    // Never leading: every covered offset is in the sink.
    for (const r of covered.ranges())
      for (let o = r.start; o < r.end; o++) expect(rows.has(o)).toBe(true);
    // Lagging exactly where the writer died: those batches are in the sink, not in coverage.
    expect(covered.gaps(0, 200)).toEqual(kills.map((k) => ({ start: k, end: k + 10 })));
    await store.close();
  });
});
