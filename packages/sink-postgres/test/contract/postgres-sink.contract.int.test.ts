import { afterAll } from 'vitest';
import { RECORD_ID_COLUMN, type ConfirmTarget } from '@thalweg/connector-core';
import { describeSinkContract, type SinkFault, type SinkSubject } from '@thalweg/contracts';
import { postgresUrl, uniqueName } from '@thalweg/test-services';
import { PostgresSink, type PgBatch, type PgTableSpec } from '../../src/index.js';
import { dropTable, ID, quiet, testPool } from '../helpers.js';

// The reader is a connection of its own: a row it sees is committed, which
// is what "durable" means for this sink (transaction-commit).
const reader = testPool(2);
const tables: PgTableSpec[] = [];
afterAll(async () => {
  for (const spec of tables) await dropTable(reader, spec);
  await reader.end();
});

/** The SQLSTATE errors the sink classifies: 40001 is retried in place, 42501 stops it. */
function sqlError(fault: SinkFault): Error {
  const code = fault === 'fatal' ? '42501' : '40001';
  return Object.assign(new Error(`injected ${fault} (${code})`), { code });
}

async function pgSubject(
  target: ConfirmTarget<'secondary'>,
  spec: PgTableSpec,
): Promise<SinkSubject<'secondary', PgBatch>> {
  let armed: SinkFault | null = null;
  const sink = await PostgresSink.open({
    id: ID,
    // The sink's own pool, ended by its close.
    connectionString: postgresUrl(),
    table: spec,
    confirm: target,
    retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
    log: quiet,
    onError: quiet,
    hooks: {
      // Inside the transaction, after the inserts, before COMMIT.
      beforeCommit: async ({ attempt }) => {
        const fault = armed;
        // 'exhausted' fails every attempt of one transaction (3, as retry says).
        if (fault === 'transient' || (fault === 'exhausted' && attempt === 3)) armed = null;
        if (fault !== null) throw sqlError(fault);
      },
    },
  });
  return {
    sink,
    batch: (records) => ({
      rows: records.map((r) => ({ recordId: Buffer.from(r.idHex, 'hex'), values: [r.value] })),
    }),
    held: async () => {
      const result = await reader.query<{ id: string; label: string }>(
        `select encode("${RECORD_ID_COLUMN}", 'hex') as id, label from "${spec.name}"`,
      );
      return result.rows.map((row) => ({ idHex: row.id, value: row.label }));
    },
    inject: (fault) => (armed = fault),
    // A row with no value for the table's one column.
    malformed: (records) => ({
      rows: records.map((r) => ({ recordId: Buffer.from(r.idHex, 'hex'), values: [] })),
    }),
    reopen: (next) => pgSubject(next, spec),
  };
}

describeSinkContract('PostgresSink', {
  lane: 'secondary',
  replay: 'deduplicated',
  faults: ['transient', 'fatal', 'exhausted'],
  refusesMalformed: true,
  restarts: true,
  open: async (target) => {
    const spec: PgTableSpec = {
      name: uniqueName('contract').replaceAll('-', '_'),
      columns: [{ name: 'label', type: 'text', nullable: false }],
    };
    tables.push(spec);
    return pgSubject(target, spec);
  },
});
