import { kafkaBrokers, postgresUrl, uniqueIdentifier, uniqueName } from '@thalweg/test-services';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileBlocks, type CompiledBlock } from '../src/compile-blocks.js';
import { findDocBlocks, type DocBlock } from '../src/doc-block.js';
import { startBlock } from '../src/run-block.js';
import { baseConfig, repoRoot, workDir } from './work-dir.js';

// The `ts service` blocks: jobs that read until they are told to stop, as a
// user's service does. Each is claimed by a scenario below that feeds it real
// records, waits for what it should have written and stops it with SIGTERM;
// it must then exit 0. A service block no scenario claims fails.

interface Scenario {
  readonly name: string;
  readonly claims: (block: DocBlock) => boolean;
  readonly run: (compiled: CompiledBlock) => Promise<void>;
}

const RUN_TIMEOUT_MS = 90_000;
const ORDERS = 200;

const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
const dbs: pg.Pool[] = [];
afterAll(() => pool.end());

/** Waits for `done`, asking again as each answer comes back; fails after `ms`. */
async function until(what: string, ms: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const kafkaToPostgres: Scenario = {
  name: 'Kafka -> raw -> PostgreSQL: every JSON order becomes one row; the one that is not JSON does not',
  claims: (b) =>
    b.code.includes('@thalweg/source-kafka') && b.code.includes('@thalweg/sink-postgres'),
  run: async (compiled) => {
    const topic = uniqueName('readme-orders');
    // The block's table is public.orders: a database of this run's own keeps runs apart.
    const database = uniqueIdentifier('readme');
    const kafka = new Kafka({ brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer();
    await admin.connect();
    await producer.connect();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      const orders = Array.from({ length: ORDERS }, (_, i) => ({
        value: JSON.stringify({ id: `o-${i}`, amount: i * 10 }),
      }));
      await producer.send({ topic, messages: [...orders, { value: 'not json' }] });
      await pool.query(`create database "${database}"`);
      const url = new URL(postgresUrl());
      url.pathname = `/${database}`;
      const db = new pg.Pool({ connectionString: url.toString(), max: 1 });
      dbs.push(db);
      const job = startBlock(compiled, {
        timeoutMs: RUN_TIMEOUT_MS,
        env: {
          BROKERS: kafkaBrokers().join(','),
          TOPIC: topic,
          PG_URL: url.toString(),
        },
      });
      let exited = false;
      void job.exited.then(() => (exited = true));
      const count = async (): Promise<number> => {
        const r = await db
          .query<{ n: string }>('select count(*) as n from orders')
          .catch(() => ({ rows: [{ n: '0' }] }));
        return Number(r.rows[0]?.n ?? 0);
      };
      try {
        await until(`${ORDERS} rows in ${database}.orders`, RUN_TIMEOUT_MS - 10_000, async () => {
          if (exited) throw new Error('the job exited before its rows');
          return (await count()) >= ORDERS;
        });
      } catch (error) {
        // What the job printed says why: stopped, its output is in the report.
        job.signal('SIGTERM');
        const { report } = await job.exited;
        throw new Error(`${String(error)} (${String(await count())} rows)\n${report}`, {
          cause: error,
        });
      }
      job.signal('SIGTERM');
      const run = await job.exited;
      expect(run.report).toBe('');
      expect(await count()).toBe(ORDERS);
      const amounts = await db.query<{ sum: string }>(
        'select sum(amount)::text as sum from orders',
      );
      expect(Number(amounts.rows[0]?.sum)).toBe((10 * ORDERS * (ORDERS - 1)) / 2);
    } finally {
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await Promise.all(dbs.splice(0).map((d) => d.end()));
      await pool.query(`drop database if exists "${database}"`);
    }
  },
};

const scenarios: readonly Scenario[] = [kafkaToPostgres];

const blocks = findDocBlocks(repoRoot).filter((b) => b.mode === 'service');
let compiled: CompiledBlock[];
beforeAll(() => {
  compiled = compileBlocks(blocks, workDir('docs-service'), baseConfig);
}, 120_000);

describe('the documentation code blocks that run as services', () => {
  it('are found, and each is claimed by exactly one scenario', () => {
    expect(blocks.length).toBeGreaterThan(0);
    for (const b of blocks) {
      expect(
        scenarios.filter((s) => s.claims(b)).map((s) => s.name),
        `${b.file}:${String(b.line)}`,
      ).toHaveLength(1);
    }
  });

  it.each(blocks.map((block, i) => ({ name: `${block.file}:${String(block.line)}`, i })))(
    '$name runs as a service',
    async ({ i }) => {
      const c = compiled[i];
      const block = blocks[i];
      if (c === undefined || block === undefined) throw new Error('not compiled');
      expect(c.errors.join('\n')).toBe('');
      const scenario = scenarios.find((s) => s.claims(block));
      if (scenario === undefined) throw new Error('no scenario claims it');
      await scenario.run(c);
    },
    RUN_TIMEOUT_MS + 20_000,
  );
});
