import { describe, expect, it } from 'vitest';
import { ConfigError } from '@thalweg/connector-core';
import { PostgresSink, type PostgresSinkOptions } from '../src/index.js';
import { ID, ordersSpec, quiet, recordingTarget } from './helpers.js';

/** Options as a JavaScript caller may pass them: `over` is not type-checked. */
function options(over: Record<string, unknown>): PostgresSinkOptions {
  const given: unknown = {
    id: ID,
    connectionString: 'postgres://nobody@127.0.0.1:1/none',
    table: ordersSpec('t'),
    confirm: recordingTarget(),
    log: quiet,
    ...over,
  };
  return given as PostgresSinkOptions;
}

function refusal(over: Record<string, unknown>): ConfigError {
  try {
    new PostgresSink(options(over));
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('the options were accepted');
}

describe('PostgresSink options', () => {
  it.each([
    [{ id: 'Not A Sink' }, 'postgresSink.id'],
    [{ connectionString: undefined }, 'postgresSink.pool'],
    [{ pool: {} }, 'postgresSink.connectionString'],
    [{ connectionString: '' }, 'postgresSink.connectionString'],
    [{ confirm: {} }, 'postgresSink.confirm'],
    [{ coverage: { merge: () => undefined } }, 'postgresSink.coverage'],
    [{ maxQueuedBatches: 0 }, 'postgresSink.maxQueuedBatches'],
    [{ maxQueuedBytes: 0 }, 'postgresSink.maxQueuedBytes'],
    [{ maxBatchesPerTransaction: 1.5 }, 'postgresSink.maxBatchesPerTransaction'],
    [{ maxRowsPerStatement: '10' }, 'postgresSink.maxRowsPerStatement'],
    [{ retry: { maxAttempts: 0 } }, 'postgresSink.retry.maxAttempts'],
    [{ retry: { baseDelayMs: 100, maxDelayMs: 10 } }, 'postgresSink.retry.maxDelayMs'],
    [{ statement: 'copy' }, 'postgresSink.statement'],
    [{ onPoison: 'ignore' }, 'postgresSink.onPoison'],
    [{ onRetryExhausted: 'skip' }, 'postgresSink.onRetryExhausted'],
    [{ onError: 'log it' }, 'postgresSink.onError'],
    [{ table: { name: '', columns: [] } }, 'postgresSink.table.name'],
    [{ table: { name: 't', schema: 'x'.repeat(64), columns: [] } }, 'postgresSink.table.schema'],
    [{ table: { name: 't', columns: [] } }, 'postgresSink.table.columns'],
    [
      { table: { name: 't', columns: [{ name: 'a', type: 'varchar', nullable: true }] } },
      'postgresSink.table.columns[0].type',
    ],
    [
      { table: { name: 't', columns: [{ name: 'a', type: 'text' }] } },
      'postgresSink.table.columns[0].nullable',
    ],
    [
      {
        table: { name: 't', columns: [{ name: '_twg_record_id', type: 'bytea', nullable: false }] },
      },
      'postgresSink.table.columns[0].name',
    ],
    [
      {
        table: {
          name: 't',
          columns: [
            { name: 'a', type: 'text', nullable: true },
            { name: 'a', type: 'bigint', nullable: true },
          ],
        },
      },
      'postgresSink.table.columns[1].name',
    ],
  ])('refuses %j naming %s', (over, path) => {
    const e = refusal(over);
    expect(e.path).toBe(path);
    expect(e.code).toBe('TWG_CONFIG_INVALID');
  });

  it('refuses an unknown option, naming it', () => {
    const e = refusal({ maxQueuedBatchez: 8 });
    expect(e.path).toBe('postgresSink.maxQueuedBatchez');
    expect(e.message).toMatch(/postgresSink\.maxQueuedBatchez: .*unknown key/);
    expect(refusal({ retry: { maxAttempt: 3 } }).path).toBe('postgresSink.retry.maxAttempt');
    expect(
      refusal({
        table: { name: 't', columns: [{ name: 'a', type: 'text', nullable: true, pk: 1 }] },
      }).path,
    ).toBe('postgresSink.table.columns[0].pk');
  });

  it('describes itself as a write-only secondary durable at transaction commit', async () => {
    const lines: string[] = [];
    const sink = new PostgresSink(options({ log: (l: string) => lines.push(l) }));
    expect(sink.descriptor).toEqual({
      id: ID,
      kind: 'postgres',
      durability: { kind: 'transaction-commit' },
      recovery: { kind: 'write-only' },
    });
    expect(sink.table).toBe('"public"."t"');
    expect(lines[0]).toContain('statement=unnest');
    expect(lines[0]).toContain('onPoison=fail');
    expect(lines[0]).toContain('onRetryExhausted=set-aside');
    // Nothing was submitted, so close needs no connection.
    await sink.close();
    await sink.close();
  });
});
