import type { RecordBatch } from 'apache-arrow';
import type { Clock } from '@thalweg/connector-core';
import type { Catalog, TableColumn, TableDescription } from './catalog/catalog.js';
import { ZerobusSinkError } from './errors.js';
import { batchFields, reconcileBatch } from './reconcile-apply.js';
import type { StreamField } from './transport.js';

export interface LiveTableOptions {
  readonly catalog: Catalog;
  readonly table: string;
  /** The declared stream fields: what a missing table is created with. Null: the table must exist. */
  readonly declared: readonly StreamField[] | null;
  /** Table properties a table created here gets (`PRIMARY_RAW_TABLE_PROPERTIES` for a future raw). */
  readonly properties: Readonly<Record<string, string>>;
  /**
   * Describe again at the next batch once this long has passed since the
   * last describe, whatever its shape: catches a change no batch reveals
   * (a column added that batches do not carry yet). Default: never.
   */
  readonly redescribeAfterMs?: number;
  readonly clock: Clock;
  /** Sees every description read; throwing refuses the batch that caused it (a raw's preconditions). */
  readonly onDescribed?: (table: TableDescription) => void;
}

/** A batch fitted to the table, and whether the table's columns changed since the last fit. */
export interface Fitted {
  readonly batch: RecordBatch;
  /** The columns differ from what the streams were opened with: the pool must be re-planned. */
  readonly changed: boolean;
}

/**
 * The sink's view of its table in the catalog. At the first fit it
 * describes the table and, when it is missing, creates it from the declared
 * fields (never altering an existing one). After that the columns are not
 * trusted forever: a batch whose shape (names, types, nullability) has not
 * yet fitted the known columns makes it describe the table again, so a
 * column added under a running pipeline is picked up instead of the batch
 * being refused against stale columns. A shape that fitted is not
 * re-described (until `redescribeAfterMs`, when set, has passed): steady
 * traffic costs no catalog call.
 */
export class LiveTable {
  private known: readonly TableColumn[] | null = null;
  /** Batch shapes that fitted `known`; cleared when the columns change. */
  private readonly fits = new Set<string>();
  private describedAt = 0;

  constructor(private readonly options: LiveTableOptions) {}

  /** The columns the table had at the last describe; null before the first. */
  get columns(): readonly TableColumn[] | null {
    return this.known;
  }

  /**
   * Reconciles `batch` with the table's columns (emit-time reconciliation),
   * describing the table first when the batch's shape is new. Throws a
   * poison-batch error naming the column that would lose data.
   */
  async fit(batch: RecordBatch): Promise<Fitted> {
    const shape = shapeOf(batch);
    if (this.known !== null && this.fits.has(shape) && !this.stale())
      return { batch: reconcileBatch(batch, this.known), changed: false };
    const first = this.known === null;
    const described = first ? await this.provision() : await this.describe();
    // a refusal here (a raw's table property flipped) fails the batch, before it is sent
    this.options.onDescribed?.(described);
    const fresh = described.columns;
    this.describedAt = this.options.clock.now();
    const changed = !first && !sameColumns(this.known ?? [], fresh);
    if (first || changed) {
      this.known = fresh;
      this.fits.clear();
    }
    const fitted = reconcileBatch(batch, fresh);
    this.fits.add(shape);
    return { batch: fitted, changed };
  }

  private stale(): boolean {
    const after = this.options.redescribeAfterMs;
    return after !== undefined && this.options.clock.now() - this.describedAt >= after;
  }

  /** Describes the table, creating it from the declared fields when it is not registered. */
  private async provision(): Promise<TableDescription> {
    const { catalog, table, declared, properties } = this.options;
    const found = await catalog.describe(table);
    if (found !== null) return found;
    if (declared === null)
      throw new ZerobusSinkError(
        'fatal-config',
        `table ${table} is not registered in the catalog, and no fields or schema are declared to create it from`,
      );
    await catalog.ensureTable(table, declared, properties);
    const created = await catalog.describe(table);
    if (created === null)
      throw new ZerobusSinkError(
        'fatal-config',
        `table ${table} is still not registered in the catalog after creating it`,
      );
    return created;
  }

  private async describe(): Promise<TableDescription> {
    const t = await this.options.catalog.describe(this.options.table);
    if (t === null)
      throw new ZerobusSinkError(
        'fatal-config',
        `table ${this.options.table} is no longer registered in the catalog`,
      );
    return t;
  }
}

function shapeOf(batch: RecordBatch): string {
  return JSON.stringify(batchFields(batch).map((f) => [f.name, f.type, f.nullable]));
}

function sameColumns(a: readonly TableColumn[], b: readonly TableColumn[]): boolean {
  return (
    a.length === b.length &&
    a.every((c, i) => {
      const d = b[i];
      return d !== undefined && c.name === d.name && c.type === d.type && c.nullable === d.nullable;
    })
  );
}
