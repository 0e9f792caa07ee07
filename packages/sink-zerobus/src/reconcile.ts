import type { TableColumn } from './catalog/catalog.js';
import type { StreamField } from './transport.js';

type FieldType = StreamField['type'];

/** How one table column is produced from the batch. */
export type ColumnStep =
  | { readonly kind: 'same'; readonly name: string }
  | {
      readonly kind: 'widen';
      readonly name: string;
      readonly from: FieldType;
      readonly to: FieldType;
    }
  | { readonly kind: 'fill-null'; readonly name: string; readonly type: FieldType };

/**
 * The emit-time verdict on a batch against the live table: write as is,
 * adapt without losing anything, or refuse naming the column.
 */
export type Reconciliation =
  | { readonly kind: 'exact' }
  | { readonly kind: 'adapt'; readonly steps: readonly ColumnStep[] }
  | { readonly kind: 'refuse'; readonly column: string; readonly reason: string };

/** Widenings that keep every value exactly. */
const WIDENS: Readonly<Partial<Record<FieldType, readonly FieldType[]>>> = {
  int8: ['int16', 'int32', 'int64', 'float32', 'float64'],
  int16: ['int32', 'int64', 'float32', 'float64'],
  int32: ['int64', 'float64'],
  float32: ['float64'],
  utf8: ['large-utf8'],
  binary: ['large-binary'],
  date32: ['date64'],
};

export interface BatchField extends StreamField {
  /** Nulls actually present in this batch's column: a nullable batch column fits a NOT NULL one if it has none. */
  readonly nullCount: number;
}

/**
 * Reconciles a batch's fields with the table's columns. Allowed: exact
 * matches, lossless widenings, table columns missing from the batch when
 * nullable (filled with nulls). Refused: a batch column the table lacks (its
 * data would be dropped), a narrowing or type change, nulls bound for a NOT
 * NULL column, a NOT NULL column the batch does not provide.
 */
export function reconcile(
  batch: readonly BatchField[],
  table: readonly TableColumn[],
): Reconciliation {
  const columns = new Map(table.map((c) => [c.name, c]));
  for (const f of batch) {
    if (!columns.has(f.name)) {
      return {
        kind: 'refuse',
        column: f.name,
        reason: 'is not a column of the table; writing would drop its values',
      };
    }
  }
  const byName = new Map(batch.map((f) => [f.name, f]));
  const steps: ColumnStep[] = [];
  let exact = batch.length === table.length;
  for (const [i, c] of table.entries()) {
    const f = byName.get(c.name);
    if (f === undefined) {
      if (!c.nullable)
        return {
          kind: 'refuse',
          column: c.name,
          reason: 'is NOT NULL in the table and missing from the batch',
        };
      steps.push({ kind: 'fill-null', name: c.name, type: c.type });
      exact = false;
      continue;
    }
    if (!c.nullable && f.nullCount > 0) {
      return {
        kind: 'refuse',
        column: c.name,
        reason: `is NOT NULL in the table and the batch holds ${f.nullCount} nulls`,
      };
    }
    if (f.type === c.type) {
      steps.push({ kind: 'same', name: c.name });
      if (batch[i]?.name !== c.name || f.nullable !== c.nullable) exact = false;
      continue;
    }
    if (WIDENS[f.type]?.includes(c.type) === true) {
      steps.push({ kind: 'widen', name: c.name, from: f.type, to: c.type });
      exact = false;
      continue;
    }
    return {
      kind: 'refuse',
      column: c.name,
      reason: `is ${c.type} in the table; the batch's ${f.type} cannot be converted without loss`,
    };
  }
  return exact ? { kind: 'exact' } : { kind: 'adapt', steps };
}
