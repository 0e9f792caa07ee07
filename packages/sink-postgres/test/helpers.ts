import pg from 'pg';
import { afterAll } from 'vitest';
import {
  derivedCoverage,
  offsetSpan,
  RecordIdHasher,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type OffsetSpan,
  type Receipt,
  type SetAside,
  type SinkId,
} from '@thalweg/connector-core';
import { postgresUrl, uniqueName } from '@thalweg/test-services';
import {
  PostgresSink,
  type PgBatch,
  type PgTableSpec,
  type PostgresSinkHooks,
  type PostgresSinkOptions,
} from '../src/index.js';

export const ID: SinkId = sinkId('pg-orders');

/** Four columns of different types, one nullable. */
export function ordersSpec(name = uniqueName('orders')): PgTableSpec {
  return {
    name,
    columns: [
      { name: 'n', type: 'bigint', nullable: false },
      { name: 'label', type: 'text', nullable: false },
      { name: 'doc', type: 'jsonb', nullable: true },
      { name: 'at', type: 'timestamptz', nullable: true },
    ],
  };
}

export function spanAt(i: number, size = 10, partition = 0): OffsetSpan {
  return offsetSpan('orders', partition, i * size, (i + 1) * size);
}

const hasher = new RecordIdHasher('test', 'orders', 0);

/** The rows of span i: deterministic ids, so a replay carries the same ids. */
export function batchAt(i: number, size = 10): PgBatch {
  return {
    rows: Array.from({ length: size }, (_, r) => {
      const offset = i * size + r;
      return {
        recordId: hasher.id(offset, Buffer.from(String(offset))),
        values: [
          offset,
          `row ${offset}`,
          { offset, tags: ['a', 'b'] },
          new Date(1_700_000_000_000),
        ],
      };
    }),
  };
}

export const cover = (i: number, sink: SinkId = ID): Confirm<'secondary'> =>
  derivedCoverage(sink, spanAt(i));

/** A confirm target that records what it was given, in order: confirmations and set-asides. */
export function recordingTarget(): ConfirmTarget<'secondary'> & {
  applied: { confirm: Confirm<'secondary'>; receipt: Receipt }[];
  asides: { span: OffsetSpan; refusal: SetAside }[];
} {
  const applied: { confirm: Confirm<'secondary'>; receipt: Receipt }[] = [];
  const asides: { span: OffsetSpan; refusal: SetAside }[] = [];
  return {
    applied,
    asides,
    apply: async (confirm, receipt) => {
      applied.push({ confirm, receipt });
    },
    setAside: async (_confirm, span, refusal) => {
      asides.push({ span, refusal });
    },
  };
}

export const quiet = (): void => undefined;

/** A pool for tests; like any pool handed to the sink it listens for 'error'. */
export function testPool(max = 6): pg.Pool {
  const pool = new pg.Pool({ connectionString: postgresUrl(), max });
  pool.on('error', quiet);
  return pool;
}

export async function countRows(pool: pg.Pool, spec: PgTableSpec): Promise<number> {
  const r = await pool.query<{ n: string }>(
    `select count(*) as n from "${spec.schema ?? 'public'}"."${spec.name}"`,
  );
  return Number(r.rows[0]?.n);
}

export async function dropTable(pool: pg.Pool, spec: PgTableSpec): Promise<void> {
  await pool.query(`drop table if exists "${spec.schema ?? 'public'}"."${spec.name}"`);
}

/** Resolves to whether `p` settled within a few event-loop turns (no timers involved). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return done;
}

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Hooks that hold the writer's first transaction just before its COMMIT:
 * `entered` resolves once the writer is there, `release` lets it commit.
 * Later transactions pass straight through.
 */
export function holdFirstCommit(): {
  hooks: PostgresSinkHooks;
  entered: Promise<void>;
  release: () => void;
} {
  const entered = gate();
  const held = gate();
  let calls = 0;
  const hooks: PostgresSinkHooks = {
    beforeCommit: async () => {
      if (calls++ === 0) {
        entered.open();
        await held.opened;
      }
    },
  };
  return { hooks, entered: entered.opened, release: held.open };
}

/** A sink on `pool` with fast retries and no start-up log; `over` replaces any option. */
export async function openSink(
  pool: pg.Pool,
  spec: PgTableSpec,
  over: Partial<PostgresSinkOptions> = {},
): Promise<{ sink: PostgresSink; target: ReturnType<typeof recordingTarget> }> {
  const target = recordingTarget();
  const sink = await PostgresSink.open({
    id: ID,
    pool,
    table: spec,
    confirm: target,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    log: quiet,
    onError: quiet,
    ...over,
  });
  return { sink, target };
}

/** The span starts of the confirmations applied so far, in order. */
export function confirmedStarts(target: ReturnType<typeof recordingTarget>): number[] {
  return target.applied.map((a) => a.receipt.span.start);
}

/**
 * A pool for one test file, and tables (fresh orders tables unless a spec is
 * given) dropped, with the pool, after the file.
 */
export function tableFixture(): { pool: pg.Pool; table: (spec?: PgTableSpec) => PgTableSpec } {
  const pool = testPool();
  const tables: PgTableSpec[] = [];
  afterAll(async () => {
    for (const t of tables) await dropTable(pool, t);
    await pool.end();
  });
  return {
    pool,
    table: (spec = ordersSpec()) => {
      tables.push(spec);
      return spec;
    },
  };
}
