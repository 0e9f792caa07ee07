import { RecordIdHasher, sinkId, type SourceBatch } from '@thalweg/connector-core';
import type { Derived } from '@thalweg/pipeline';
import type { PgBatch, PgRow, PgTableSpec } from '@thalweg/sink-postgres';
import pg from 'pg';

/*
 * The topology every child runs, and what the parent needs to know about it
 * to audit: names, the table, the payloads and the derivation.
 */

/** Hashed into every record id; raw records it in every segment. */
export const CLUSTER = 'thalweg-harness';
export const RAW = sinkId('raw');
export const PG = sinkId('pg-events');
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
 * Deterministic, as the pipeline requires (recovery derives the same raw
 * batch again): the row is a function of the record, its id the record id
 * raw's own record would hash to.
 */
export function toPgBatch(batch: SourceBatch): Derived<PgBatch> {
  const hasher = new RecordIdHasher(CLUSTER, batch.span.topic, batch.span.partition);
  const rows: PgRow[] = [];
  const quarantined: { offset: number; reason: 'decode'; detail: string }[] = [];
  for (const r of batch.records) {
    try {
      const v = decodePayload(r.value);
      rows.push({
        recordId: hasher.id(r.offset, r.value),
        values: [v.id, v.n, batch.span.partition, r.offset],
      });
    } catch (error) {
      quarantined.push({ offset: r.offset, reason: 'decode', detail: String(error) });
    }
  }
  return { batch: rows.length === 0 ? null : { rows }, quarantined };
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
