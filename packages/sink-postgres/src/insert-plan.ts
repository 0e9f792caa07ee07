import { createHash } from 'node:crypto';
import type { PgBatch } from './pg-batch.js';
import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { qualifiedName, quoteIdent, type PgColumnType, type PgTableSpec } from './table-spec.js';

/**
 * How rows reach the server, one statement per chunk, both ending in
 * `ON CONFLICT (_twg_record_id) DO NOTHING` so that a replay inserts nothing:
 *
 * - `unnest`: one array parameter per column, `INSERT ... SELECT * FROM
 *   unnest($1::bytea[], $2::bigint[], ...)`. The statement text does not
 *   grow with the rows and the parameter count is the column count.
 * - `values`: a multi-row `VALUES ($1, ...), (...)`, one parameter per
 *   value, so a chunk is capped below PostgreSQL's 65 535 parameters.
 *
 * The bench measures both; `unnest` is the default because it was faster.
 */
export type StatementShape = 'unnest' | 'values';

/** The most bind parameters one statement may carry (a 16-bit count on the wire). */
export const MAX_PARAMETERS = 65_535;

/** Consecutive rows of one batch inside a chunk. */
interface Segment {
  readonly batch: number;
  readonly firstRow: number;
  readonly rows: number;
}

export interface InsertChunk {
  readonly query: { readonly name: string; readonly text: string; readonly values: unknown[] };
  readonly rows: number;
  readonly segments: readonly Segment[];
}

/** Every statement of one transaction, encoded once and reused by its retries. */
export interface InsertPlan {
  readonly chunks: readonly InsertChunk[];
  /** Bytes of encoded values per batch, for the receipts. */
  readonly bytes: readonly number[];
}

/** Where a refused bind parameter sits: its column and, for `values`, its row. */
export interface ParameterLocation {
  readonly column: string;
  readonly batch?: number;
  readonly row?: number;
}

export class InsertPlanner {
  readonly rowsPerStatement: number;
  private readonly table: string;
  private readonly names: readonly string[];
  private readonly types: readonly PgColumnType[];
  private readonly encoders: readonly Encoder[];
  private readonly texts = new Map<number, { name: string; text: string }>();

  constructor(
    spec: PgTableSpec,
    readonly shape: StatementShape,
    maxRowsPerStatement: number,
  ) {
    this.table = qualifiedName(spec);
    this.names = [RECORD_ID_COLUMN, ...spec.columns.map((c) => c.name)];
    this.types = ['bytea', ...spec.columns.map((c) => c.type)];
    this.encoders = this.types.map(encoderFor);
    this.rowsPerStatement =
      shape === 'values'
        ? Math.min(maxRowsPerStatement, Math.floor(MAX_PARAMETERS / this.names.length))
        : maxRowsPerStatement;
  }

  /** Splits the rows of `batches`, in order, into statements of at most rowsPerStatement rows. */
  plan(batches: readonly PgBatch[]): InsertPlan {
    const chunks: InsertChunk[] = [];
    const bytes = batches.map(() => 0);
    let segments: Segment[] = [];
    let pending = 0;
    const emit = () => {
      if (pending === 0) return;
      chunks.push(this.encode(batches, segments, pending, bytes));
      segments = [];
      pending = 0;
    };
    batches.forEach((batch, b) => {
      let row = 0;
      while (row < batch.rows.length) {
        const take = Math.min(batch.rows.length - row, this.rowsPerStatement - pending);
        segments.push({ batch: b, firstRow: row, rows: take });
        pending += take;
        row += take;
        if (pending === this.rowsPerStatement) emit();
      }
    });
    emit();
    return { chunks, bytes };
  }

  /** Maps a 1-based bind parameter of `chunk` to its column (and row, for `values`). */
  locate(chunk: InsertChunk, parameter: number): ParameterLocation | null {
    const width = this.names.length;
    const index = parameter - 1;
    if (!Number.isSafeInteger(index) || index < 0) return null;
    if (this.shape === 'unnest') {
      const column = this.names[index];
      return column === undefined ? null : { column };
    }
    const column = this.names[index % width];
    let rowInChunk = Math.floor(index / width);
    if (column === undefined) return null;
    for (const s of chunk.segments) {
      if (rowInChunk < s.rows) return { column, batch: s.batch, row: s.firstRow + rowInChunk };
      rowInChunk -= s.rows;
    }
    return { column };
  }

  private encode(
    batches: readonly PgBatch[],
    segments: readonly Segment[],
    rows: number,
    bytes: number[],
  ): InsertChunk {
    const width = this.names.length;
    const statement = this.statement(rows);
    if (this.shape === 'unnest') {
      const columns: unknown[][] = this.names.map(() => new Array<unknown>(rows));
      let at = 0;
      for (const s of segments) {
        const batchRows = batches[s.batch]?.rows ?? [];
        for (let r = s.firstRow; r < s.firstRow + s.rows; r++, at++) {
          const row = batchRows[r];
          if (row === undefined) continue;
          for (let c = 0; c < width; c++) {
            const value = this.encodeValue(c, c === 0 ? row.recordId : row.values[c - 1]);
            (columns[c] as unknown[])[at] = value;
            bytes[s.batch] = (bytes[s.batch] ?? 0) + sizeOf(value);
          }
        }
      }
      return { query: { ...statement, values: columns }, rows, segments };
    }
    const values = new Array<unknown>(rows * width);
    let at = 0;
    for (const s of segments) {
      const batchRows = batches[s.batch]?.rows ?? [];
      for (let r = s.firstRow; r < s.firstRow + s.rows; r++) {
        const row = batchRows[r];
        for (let c = 0; c < width; c++, at++) {
          const value = this.encodeValue(c, c === 0 ? row?.recordId : row?.values[c - 1]);
          values[at] = value;
          bytes[s.batch] = (bytes[s.batch] ?? 0) + sizeOf(value);
        }
      }
    }
    return { query: { ...statement, values }, rows, segments };
  }

  private encodeValue(column: number, value: unknown): unknown {
    const encode = this.encoders[column];
    return encode === undefined ? value : encode(value);
  }

  /**
   * The statement text for `rows` rows, and a name derived from it: named
   * statements are parsed once per connection, and equal names always mean
   * equal texts (pg refuses one name for two texts).
   */
  private statement(rows: number): { name: string; text: string } {
    const key = this.shape === 'unnest' ? 0 : rows;
    const known = this.texts.get(key);
    if (known !== undefined) return known;
    const columns = this.names.map(quoteIdent).join(', ');
    const conflict = `on conflict (${quoteIdent(RECORD_ID_COLUMN)}) do nothing`;
    let text: string;
    if (this.shape === 'unnest') {
      const arrays = this.types.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
      text = `insert into ${this.table} (${columns}) select * from unnest(${arrays}) ${conflict}`;
    } else {
      const width = this.names.length;
      const tuples: string[] = [];
      for (let r = 0; r < rows; r++) {
        tuples.push(`(${this.types.map((t, c) => `$${r * width + c + 1}::${t}`).join(',')})`);
      }
      text = `insert into ${this.table} (${columns}) values ${tuples.join(',')} ${conflict}`;
    }
    const name = `twg_pgsink_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    const made = { name, text };
    this.texts.set(key, made);
    return made;
  }
}

type Encoder = ((value: unknown) => unknown) | undefined;

function encoderFor(type: PgColumnType): Encoder {
  if (type === 'jsonb') return encodeJson;
  if (type === 'bytea') return encodeBytes;
  return undefined;
}

/**
 * JSON is serialised here rather than by pg, which would turn a JS array
 * into a PostgreSQL array literal. A value JSON cannot represent (a
 * function, a BigInt, a cycle) is sent as text the server refuses as
 * invalid JSON, naming the column, instead of silently becoming NULL.
 */
function encodeJson(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  let json: unknown;
  try {
    json = JSON.stringify(value);
  } catch {
    // A BigInt or a cycle: the server's refusal will name the column.
    json = undefined;
  }
  return typeof json === 'string' ? json : `(${typeof value} is not representable as JSON)`;
}

function encodeBytes(value: unknown): unknown {
  if (value instanceof Buffer || !(value instanceof Uint8Array)) return value;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function sizeOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return value.length;
  if (value instanceof Uint8Array) return value.byteLength;
  return 8;
}
