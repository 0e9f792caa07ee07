// A child process for the crash test: a transactional sink that writes a batch,
// reports the durable ack on stdout, then waits for "record" on stdin before
// recording coverage. The parent SIGKILLs it in that window, which is exactly
// "crashed between the sink's ack and the coverage write".
// Runs from dist-test (compiled by tsconfig.check.json), importing the built package.
import { createInterface } from 'node:readline';
import pg from 'pg';
import { offsetSpan, sinkId } from '@thalweg/connector-core';
import { WriteBehindCoverage } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';

const [url, schema, localDir, batchesArg] = process.argv.slice(2);
if (
  url === undefined ||
  schema === undefined ||
  localDir === undefined ||
  batchesArg === undefined
) {
  throw new Error('usage: crash-writer <pg-url> <schema> <local-dir> <batches>');
}
const sink = sinkId('pg-sink');
const pool = new pg.Pool({ connectionString: url, max: 2 });
const durable = await PostgresCoverage.open({ pool: url, schema, sinks: [sink] });
const local = await LevelDbCoverage.open({ location: localDir, sinks: [sink] });
const coverage = new WriteBehindCoverage({ local, durable, checkpointIntervalMs: 25 });
// A restarted writer first hands over what its local tier still holds.
await coverage.checkpoint();

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next =
  (
    await pool.query<{ n: string }>(
      `select coalesce(max(o) + 1, 0) as n from "${schema}".sink_rows`,
    )
  ).rows[0]?.n ?? '0';
for (let start = Number(next); start < Number(batchesArg) * 10; start += 10) {
  await pool.query(
    `insert into "${schema}".sink_rows select generate_series($1::bigint, $2::bigint)`,
    [start, start + 9],
  );
  process.stdout.write(`acked ${start}\n`);
  const go = await lines.next();
  if (go.done === true) break;
  const span = offsetSpan('orders', 0, start, start + 10);
  await coverage.recordDurable([
    {
      sink,
      span,
      durability: 'transaction-commit',
      records: 10,
      bytes: 0,
      submittedAt: 0,
      confirmedAt: Date.now(),
    },
  ]);
}
await coverage.close();
await pool.end();
process.stdin.destroy();
process.stdout.write('done\n');
