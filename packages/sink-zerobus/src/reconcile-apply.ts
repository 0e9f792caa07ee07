import {
  Field,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  vectorFromArray,
  type Data,
  type DataType,
} from 'apache-arrow';
import { arrowTypeFor, fieldTypeOf } from './arrow-fields.js';
import type { TableColumn } from './catalog/catalog.js';
import { ZerobusSinkError } from './errors.js';
import { reconcile, type BatchField, type ColumnStep, type Reconciliation } from './reconcile.js';

/** The batch's fields with the null counts reconciliation needs. */
export function batchFields(batch: RecordBatch): BatchField[] {
  return batch.schema.fields.map((f, i) => ({
    name: f.name,
    // apache-arrow types Field.type as any; every field's type is a DataType.
    type: fieldTypeOf(f.type as DataType, f.name),
    nullable: f.nullable,
    nullCount: batch.getChildAt(i)?.nullCount ?? 0,
  }));
}

/**
 * Reconciles `batch` with the table and returns the batch to write, in the
 * table's column order, or throws a poison-batch error naming the column that
 * would lose data. Adapted columns (widenings, null fills) are rebuilt
 * value by value: it is the rare path, so it favours obvious correctness.
 */
export function reconcileBatch(batch: RecordBatch, table: readonly TableColumn[]): RecordBatch {
  const verdict: Reconciliation = reconcile(batchFields(batch), table);
  if (verdict.kind === 'exact') return batch;
  if (verdict.kind === 'refuse') {
    throw new ZerobusSinkError('poison-batch', `column ${verdict.column} ${verdict.reason}`);
  }
  const children: Data[] = verdict.steps.map((step) => columnData(batch, step));
  const schema = new Schema(table.map((c) => new Field(c.name, arrowTypeFor(c.type), c.nullable)));
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: batch.numRows, children }),
  );
}

function columnData(batch: RecordBatch, step: ColumnStep): Data {
  switch (step.kind) {
    case 'same': {
      const child = batch.getChild(step.name);
      if (child === null)
        throw new ZerobusSinkError('poison-batch', `column ${step.name} vanished from the batch`);
      const data: Data | undefined = child.data[0] as Data | undefined;
      return data ?? makeData({ type: child.type as DataType, length: 0 });
    }
    case 'fill-null':
      return single(
        vectorFromArray(new Array<null>(batch.numRows).fill(null), arrowTypeFor(step.type)).data,
      );
    case 'widen': {
      const child = batch.getChild(step.name);
      if (child === null)
        throw new ZerobusSinkError('poison-batch', `column ${step.name} vanished from the batch`);
      const toBig = step.to === 'int64';
      const values = Array.from(child, (v: unknown) =>
        v === null ? null : toBig ? BigInt(v as number) : v,
      );
      return single(vectorFromArray(values, arrowTypeFor(step.to)).data);
    }
  }
}

function single(data: readonly Data[]): Data {
  const [first] = data;
  if (first === undefined || data.length !== 1)
    throw new ZerobusSinkError('poison-batch', 'an adapted column did not build as one chunk');
  return first;
}
