import {
  runSyncDerivation,
  sinkId,
  type DerivationResult,
  type SourceBatch,
  type SourcePartition,
  type SourceRecord,
} from '@thalweg/connector-core';
import { rowDerivation, type PgBatch, type PgTableSpec } from '@thalweg/sink-postgres';
import pg from 'pg';

/*
 * The topology every child runs, and what the parent needs to know about it
 * to audit: names, the table, the payloads and the derivation.
 */

/** Hashed into every record id; raw records it in every segment. */
export const CLUSTER = 'thalweg-harness';
export const RAW = sinkId('raw');
/** The Postgres secondary's id, as it is declared in the topology. */
export const PG_NAME = 'pg-events';
export const PG = sinkId(PG_NAME);
/** Every child connection carries it, so the parent can drop them (pg_terminate_backend). */
export const CHILD_APPLICATION_NAME = 'thalweg-harness';
/** The parent's own connections: never dropped by its own fault injection. */
export const PARENT_APPLICATION_NAME = 'thalweg-harness-audit';
export const EVENTS_TABLE = 'events';

/** The payload of produced record `i`: a unique id, so the audit can match produced to stored. */
export interface HarnessPayload {
  readonly id: string;
  readonly n: number;
}

const PAD = 'x'.repeat(200);

/** The unique id of produced record `i` of a run. */
export function payloadId(i: number, run: string): string {
  return `${run}-${i}`;
}

export function payload(i: number, run: string): string {
  return JSON.stringify({ id: payloadId(i, run), n: i, pad: PAD });
}

export function decodePayload(value: Uint8Array): HarnessPayload {
  const v = JSON.parse(
    Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString(),
  ) as Partial<HarnessPayload>;
  if (typeof v.id !== 'string' || typeof v.n !== 'number') {
    throw new TypeError('payload: not a harness record (needs a string id and a number n)');
  }
  return { id: v.id, n: v.n };
}

/** The secondary's table: the payload's unique id and where the record came from. */
export function eventsTable(schema: string): PgTableSpec {
  return {
    schema,
    name: EVENTS_TABLE,
    columns: [
      { name: 'id', type: 'text', nullable: false },
      { name: 'n', type: 'bigint', nullable: false },
      { name: 'src_partition', type: 'integer', nullable: false },
      { name: 'src_offset', type: 'bigint', nullable: false },
    ],
  };
}

/**
 * The row of a harness record in the events table: deterministic, as the
 * pipeline requires (recovery maps the same record again). A payload that is
 * not a harness record throws, and the part quarantines it as `decode`.
 */
export function pgRow(record: SourceRecord, from: SourcePartition): readonly unknown[] {
  const v = decodePayload(record.value);
  return [v.id, v.n, from.partition, record.offset];
}

/** What the Postgres part derives from a raw batch, as the child runs it (for tests). */
export function toPgBatch(batch: SourceBatch): DerivationResult<PgBatch> {
  return runSyncDerivation(rowDerivation(eventsTable('any'), pgRow), CLUSTER, batch);
}

/** A pool with the listener pg asks for: a dropped idle connection is logged, not fatal. */
export function harnessPool(
  connectionString: string,
  applicationName: string,
  max: number,
  log: (line: string) => void,
): pg.Pool {
  const pool = new pg.Pool({ connectionString, application_name: applicationName, max });
  pool.on('error', (error) => {
    log(`idle postgres connection lost: ${error.message}`);
  });
  return pool;
}
