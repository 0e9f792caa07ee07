import type pg from 'pg';
import { EVENTS_TABLE } from './harness-topology.js';

/** One row of the secondary's table. */
export interface TableRow {
  readonly recordId: string;
  readonly id: string;
  readonly partition: number;
  readonly offset: number;
}

/** Every row of the events table; none while the table does not exist yet (no child opened it). */
export async function readTable(pool: pg.Pool, schema: string): Promise<TableRow[]> {
  try {
    const { rows } = await pool.query<{ rid: string; id: string; p: number; o: string }>(
      `select encode(_twg_record_id, 'hex') as rid, id, src_partition as p, src_offset as o
         from "${schema}"."${EVENTS_TABLE}"`,
    );
    return rows.map((r) => ({ recordId: r.rid, id: r.id, partition: r.p, offset: Number(r.o) }));
  } catch (error) {
    if (isUndefinedTable(error)) return [];
    throw error;
  }
}

function isUndefinedTable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '42P01';
}

/** The offsets the table holds, per partition. */
export function tableOffsets(rows: readonly TableRow[], partitions: number): Set<number>[] {
  const out = Array.from({ length: partitions }, () => new Set<number>());
  for (const r of rows) out[r.partition]?.add(r.offset);
  return out;
}
