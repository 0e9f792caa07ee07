// `pnpm --filter @thalweg/sink-postgres bench`: one JSON object per line.
// The same 200 000 rows (~256 bytes each, 1 000 per batch) written to a fresh
// table three ways in one run: serial (flush after every batch: one
// transaction per batch, submit waits for its commit), pipelined (submit
// returns on acceptance, the writer commits up to 16 batches per
// transaction), and pipelined with the VALUES statement instead of unnest,
// which is how the default statement shape was chosen.
import pg from 'pg';
import {
  derivedCoverage,
  offsetSpan,
  RecordIdHasher,
  sinkId,
  type OffsetSpan,
} from '@thalweg/connector-core';
import {
  PostgresSink,
  type PgBatch,
  type PgTableSpec,
  type StatementShape,
} from '@thalweg/sink-postgres';

const url = process.env['THALWEG_PG_URL'];
if (url === undefined || url === '') {
  process.stderr.write(
    'THALWEG_PG_URL is not set: the bench writes to a real PostgreSQL. ' +
      'Run `eval "$(pnpm services:up)"` first, or point THALWEG_PG_URL at a database of your own.\n',
  );
  process.exit(1);
}

const ROWS = 200_000;
const BATCH_ROWS = 1_000;
const ID = sinkId('bench-pg');
const SPEC: PgTableSpec = {
  name: `twg_bench_${process.pid}`,
  columns: [
    { name: 'n', type: 'bigint', nullable: false },
    { name: 'label', type: 'text', nullable: false },
    { name: 'payload', type: 'text', nullable: false },
    { name: 'at', type: 'timestamptz', nullable: false },
    { name: 'ok', type: 'boolean', nullable: false },
  ],
};

function batches(): { batch: PgBatch; span: OffsetSpan }[] {
  const hasher = new RecordIdHasher('bench', 'events', 0);
  const payload = 'p'.repeat(200);
  const at = new Date(1_700_000_000_000);
  const out: { batch: PgBatch; span: OffsetSpan }[] = [];
  for (let start = 0; start < ROWS; start += BATCH_ROWS) {
    const rows = Array.from({ length: BATCH_ROWS }, (_, r) => {
      const n = start + r;
      return {
        recordId: hasher.id(n, Buffer.from(String(n))),
        values: [n, `event-${n}`, payload, at, n % 2 === 0],
      };
    });
    out.push({ batch: { rows }, span: offsetSpan('events', 0, start, start + BATCH_ROWS) });
  }
  return out;
}

const pool = new pg.Pool({ connectionString: url, max: 3 });
pool.on('error', () => undefined);
const input = batches();

async function run(
  mode: 'serial' | 'pipelined',
  statement: StatementShape,
): Promise<{ rowsPerS: number; rowBytes: number; perTx: number }> {
  await pool.query(`drop table if exists "public"."${SPEC.name}"`);
  let bytes = 0;
  const sink = await PostgresSink.open({
    id: ID,
    pool,
    table: SPEC,
    statement,
    confirm: {
      apply: async (_confirm, receipt) => {
        bytes += receipt.bytes;
      },
    },
    log: () => undefined,
  });
  const started = performance.now();
  for (const { batch, span } of input) {
    await sink.submit(batch, span, derivedCoverage(ID, span));
    if (mode === 'serial') await sink.flush();
  }
  await sink.flush();
  const ms = performance.now() - started;
  const stats = sink.stats();
  await sink.close();
  if (stats.inserted !== ROWS) throw new Error(`inserted ${stats.inserted} rows, expected ${ROWS}`);
  return {
    rowsPerS: ROWS / (ms / 1000),
    rowBytes: bytes / ROWS,
    perTx: stats.batchesPerTransaction.mean,
  };
}

function line(
  mode: string,
  statement: StatementShape,
  r: { rowsPerS: number; rowBytes: number; perTx: number },
  extra: Record<string, number> = {},
): void {
  process.stdout.write(
    `${JSON.stringify({
      bench: 'postgres-sink',
      rows: ROWS,
      row_bytes: Math.round(r.rowBytes),
      batch_rows: BATCH_ROWS,
      mode,
      statement,
      rows_per_s: Math.round(r.rowsPerS),
      batches_per_tx: Number(r.perTx.toFixed(1)),
      ...extra,
    })}\n`,
  );
}

try {
  const serial = await run('serial', 'unnest');
  line('serial', 'unnest', serial);
  const piped = await run('pipelined', 'unnest');
  line('pipelined', 'unnest', piped, {
    ratio: Number((piped.rowsPerS / serial.rowsPerS).toFixed(2)),
  });
  const values = await run('pipelined', 'values');
  line('pipelined', 'values', values, {
    unnest_over_values: Number((piped.rowsPerS / values.rowsPerS).toFixed(2)),
  });
} finally {
  await pool.query(`drop table if exists "public"."${SPEC.name}"`);
  await pool.end();
}
