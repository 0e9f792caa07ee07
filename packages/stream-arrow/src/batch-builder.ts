import { RECORD_ID_COLUMN } from '@thalweg/connector-core';
import { makeData, RecordBatch, Struct, type Data } from 'apache-arrow';
import type { BatchSchema, FieldSpec } from './batch-schema.js';
import { binaryColumn } from './binary-column.js';
import { freshMemory, ScratchMemory, type ColumnMemory } from './column-memory.js';
import { checkValue } from './column-values.js';
import { ArrowBatchError } from './errors.js';
import { fixedWidthColumn } from './fixed-width-columns.js';
import { encodeIpcStream } from './ipc-stream.js';
import { recordIdColumn, type RecordProvenance } from './record-id-column.js';
import { utf8Column } from './utf8-column.js';

/** A record as an object keyed by field name; properties outside the schema are ignored. */
export type Row = Readonly<Record<string, unknown>>;

/** Decoded columns keyed by field name: arrays of values, or typed arrays of the storage. */
export type Columns = Readonly<Record<string, ArrayLike<unknown>>>;

/**
 * Builds Arrow record batches for one explicit schema, writing each column's
 * buffers directly (value offsets, data, validity bitmap) instead of going
 * through apache-arrow's generic builders, which allocate per value.
 *
 * All or nothing: every value is checked as its column is filled, into
 * buffers owned by the call; the RecordBatch is assembled only after every
 * column passed. A bad value throws an `ArrowBatchError` naming the field and
 * the row, and nothing of the batch exists. To keep one bad record from
 * failing a whole batch, check records as they arrive with `validateRow` and
 * quarantine the ones it refuses.
 */
export class BatchBuilder {
  /** The arena `encodeRows` and `encodeColumns` build in, made on first use. */
  private scratch: ScratchMemory | undefined;

  constructor(readonly schema: BatchSchema) {}

  /**
   * Builds from row objects. Each column is read straight from the rows'
   * properties (no transposed copy). `provenance` is required exactly when
   * the schema has a record id.
   */
  fromRows(rows: ArrayLike<Row>, provenance?: RecordProvenance): RecordBatch {
    return this.rowsInto(freshMemory, rows, provenance);
  }

  /** Builds from decoded columns, one per schema field (record id excluded), all of one length. */
  fromColumns(columns: Columns, provenance?: RecordProvenance): RecordBatch {
    return this.columnsInto(freshMemory, columns, provenance);
  }

  /**
   * `encodeIpcStream(fromRows(rows, provenance))`, byte for byte, with one
   * fresh allocation: the message. The columns are built in an arena this
   * builder keeps and reuses (`ScratchMemory`), so a builder that encodes
   * batch after batch touches fresh memory once per batch, not twice. The
   * arena holds about one batch's columns between calls.
   */
  encodeRows(rows: ArrayLike<Row>, provenance?: RecordProvenance): Uint8Array {
    const memory = this.arena();
    return encodeIpcStream(this.rowsInto(memory, rows, provenance));
  }

  /** `encodeIpcStream(fromColumns(columns, provenance))`, built as `encodeRows` builds. */
  encodeColumns(columns: Columns, provenance?: RecordProvenance): Uint8Array {
    const memory = this.arena();
    return encodeIpcStream(this.columnsInto(memory, columns, provenance));
  }

  private arena(): ScratchMemory {
    this.scratch ??= new ScratchMemory();
    this.scratch.reset();
    return this.scratch;
  }

  private rowsInto(
    memory: ColumnMemory,
    rows: ArrayLike<Row>,
    provenance?: RecordProvenance,
  ): RecordBatch {
    for (let i = 0; i < rows.length; i++) {
      const row: unknown = rows[i];
      if (typeof row !== 'object' || row === null) {
        throw new ArrowBatchError('TWG_ARROW_VALUE_INVALID', 'record is not an object', { row: i });
      }
    }
    const children = this.schema.fields.map((spec) => buildColumn(spec, rows, spec.name, memory));
    return this.assemble(memory, children, rows.length, provenance);
  }

  private columnsInto(
    memory: ColumnMemory,
    columns: Columns,
    provenance?: RecordProvenance,
  ): RecordBatch {
    const fields = this.schema.fields;
    const first = fields[0];
    const length = first === undefined ? 0 : (columns[first.name]?.length ?? 0);
    for (const name of Object.keys(columns)) {
      if (!fields.some((f) => f.name === name)) {
        input(name, `is not a field of the schema (${fields.map((f) => f.name).join(', ')})`);
      }
    }
    const children = fields.map((spec) => {
      const values = columns[spec.name];
      if (values === undefined) return input(spec.name, 'column is missing');
      if (values.length !== length) {
        input(spec.name, `column holds ${values.length} values, the batch has ${length} rows`);
      }
      return buildColumn(spec, values, undefined, memory);
    });
    return this.assemble(memory, children, length, provenance);
  }

  /** Adds the record id column if the schema has one, then wraps the columns as a batch. */
  private assemble(
    memory: ColumnMemory,
    children: Data[],
    length: number,
    provenance?: RecordProvenance,
  ): RecordBatch {
    if (this.schema.recordId !== 'none') {
      if (provenance === undefined) {
        input(RECORD_ID_COLUMN, "the schema adds a record id: pass the rows' provenance");
      }
      children.push(
        recordIdColumn(this.schema.recordId, provenance, length, RECORD_ID_COLUMN, memory),
      );
    } else if (provenance !== undefined) {
      input(RECORD_ID_COLUMN, 'provenance given, but the schema has no record id column');
    }
    const arrow = this.schema.arrow;
    const struct = makeData({ type: new Struct(arrow.fields), length, nullCount: 0, children });
    return new RecordBatch(arrow, struct);
  }

  /**
   * Checks one record against the schema without building anything, with
   * the same rules the build applies: a record that passes always builds.
   * `row` is only used in the error.
   */
  validateRow(record: unknown, row = 0): void {
    if (typeof record !== 'object' || record === null) {
      throw new ArrowBatchError('TWG_ARROW_VALUE_INVALID', 'record is not an object', { row });
    }
    for (const spec of this.schema.fields) {
      const value = (record as Row)[spec.name];
      if (value === null || value === undefined) {
        if (!spec.nullable) {
          throw new ArrowBatchError(
            'TWG_ARROW_VALUE_MISSING',
            value === undefined
              ? 'missing in a non-nullable field'
              : 'null in a non-nullable field',
            { field: spec.name, row },
          );
        }
      } else {
        checkValue(value, spec, row);
      }
    }
  }
}

/** `key` set: `values` are row objects and the column is their property `key`. */
function buildColumn(
  spec: FieldSpec,
  values: ArrayLike<unknown>,
  key: string | undefined,
  memory: ColumnMemory,
): Data {
  switch (spec.type.kind) {
    case 'utf8':
      return utf8Column(spec, values, key, memory);
    case 'binary':
      return binaryColumn(spec, values, key, memory);
    default:
      return fixedWidthColumn(spec, values, key, memory);
  }
}

function input(field: string, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_INPUT_INVALID', reason, { field });
}
