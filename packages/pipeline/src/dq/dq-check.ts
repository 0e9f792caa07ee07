import type { SourceBatch, SourceRecord } from '@thalweg/connector-core';
import type { z } from 'zod';
import { PipelineError } from '../errors.js';
import type { Derive, Derived, DqCheckCounts, QuarantineNote } from '../topology.js';

/** A row check: true passes, false fails, a string fails with that reason. */
export type RowPredicate<R> = (row: R) => boolean | string;

/** Maps one record to its row; null leaves the record out (neither checked nor written). */
export type RowOf<R> = (record: SourceRecord) => R | null;

/**
 * Builds a secondary's batch from the rows that passed every check, with
 * `passing` holding their records in the same order (`rows[i]` came from
 * `passing.records[i]`), over the whole span.
 */
export type BuildBatch<R, B> = (rows: readonly R[], passing: SourceBatch) => B;

/** A derivation with data-quality checks: a `Derive` that also names its checks. */
export type CheckedDerive<B> = ((batch: SourceBatch) => Derived<B>) & {
  readonly dqChecks: readonly string[];
};

/**
 * Whether a schema fits rows of type `R`: it takes every row (the row is
 * one of its inputs, read-only), or it narrows the row (what it takes is a
 * part of a row: some of its fields, each of a type the row's field has,
 * as a `z.enum` narrows a string). A schema on fields the row lacks, or of
 * another type, fits neither way.
 */
export type SchemaFits<R, I> = R extends Frozen<I> ? true : I extends Part<R> ? true : false;

/** `T` with every array and field read-only: a schema only reads the row. */
export type Frozen<T> = T extends readonly (infer U)[]
  ? readonly Frozen<U>[]
  : T extends (...args: never[]) => unknown
    ? T
    : T extends object
      ? { readonly [K in keyof T]: Frozen<T[K]> }
      : T;

/** Some of `T`'s fields, each (deeply) a part of that field's type. */
export type Part<T> = T extends readonly (infer U)[]
  ? readonly Part<U>[]
  : T extends (...args: never[]) => unknown
    ? T
    : T extends object
      ? { readonly [K in keyof T]?: Part<T[K]> }
      : T;

/** A check as run: null when the row passes, else why it failed. */
interface Check<R> {
  readonly name: string;
  readonly run: (row: R) => string | null;
}

/**
 * A rows-first derivation with declared data-quality checks (ADR 0026):
 * each record is mapped to a row, every check runs on every row, a row that
 * fails any check is quarantined with reason `dq` (the note names each failed
 * check and, for a schema, the field path), and the rows that pass are built
 * into the secondary's batch. The outcome per check goes to the dq-audit
 * trail. Everything here must be deterministic: recovery derives the same raw
 * batch again and must reach the same rows and the same verdicts.
 *
 * ```ts
 * const derive = checked((r) => JSON.parse(text(r.value)) as Order)
 *   .check('positive amount', (o) => o.amount > 0 || `amount ${o.amount} is not positive`)
 *   .schema('order shape', orderSchema)
 *   .build((rows) => rows);
 * ```
 */
export class CheckedDerivation<R> {
  /** Use `checked(rowOf)`. */
  constructor(
    private readonly rowOf: RowOf<R>,
    private readonly checks: readonly Check<R>[],
  ) {}

  /** Adds a predicate check. A predicate that throws fails the row with the thrown message. */
  check(name: string, predicate: RowPredicate<R>): CheckedDerivation<R> {
    return this.with(name, (row) => {
      const verdict = predicate(row);
      if (verdict === true) return null;
      return verdict === false ? 'failed' : `failed: ${verdict}`;
    });
  }

  /**
   * Adds a zod schema check: a row fails when the schema does not accept it,
   * named by the first failing field path. A schema that does not fit the
   * row's type (`SchemaFits`) does not compile.
   */
  schema<S extends z.ZodType>(
    name: string,
    schema: S,
    ..._rowFits: SchemaFits<R, z.input<S>> extends true ? [] : [schemaDoesNotFitTheRow: never]
  ): CheckedDerivation<R> {
    return this.with(name, (row) => {
      const parsed = schema.safeParse(row);
      if (parsed.success) return null;
      const [first, ...more] = parsed.error.issues;
      if (first === undefined) return 'failed';
      const at = first.path.length === 0 ? '(row)' : first.path.map(String).join('.');
      const rest = more.length === 0 ? '' : ` (and ${more.length} more)`;
      return `failed at ${at}: ${first.message}${rest}`;
    });
  }

  /** Ends the declaration: the derivation a `secondary()` takes. */
  build<B>(buildBatch: BuildBatch<R, B>): CheckedDerive<B> {
    const { rowOf, checks } = this;
    const derive = (batch: SourceBatch): Derived<B> => derived(batch, rowOf, checks, buildBatch);
    return Object.assign(derive, { dqChecks: checks.map((c) => c.name) });
  }

  private with(name: string, run: (row: R) => string | null): CheckedDerivation<R> {
    if (name.length === 0) {
      throw new PipelineError('TWG_PIPELINE_TOPOLOGY_INVALID', 'a dq check needs a name');
    }
    if (this.checks.some((c) => c.name === name)) {
      throw new PipelineError(
        'TWG_PIPELINE_TOPOLOGY_INVALID',
        `dq check '${name}' is declared twice; each check of a derivation needs its own name`,
      );
    }
    return new CheckedDerivation(this.rowOf, [...this.checks, { name, run: guarded(run) }]);
  }
}

/** Starts a checked derivation from how a record becomes a row. */
export function checked<R>(rowOf: RowOf<R>): CheckedDerivation<R> {
  return new CheckedDerivation(rowOf, []);
}

/** Whether a derivation declares checks (and so needs a dq-audit store). */
export function dqChecksOf(derive: Derive<unknown>): readonly string[] {
  const names: unknown = (derive as Partial<CheckedDerive<unknown>>).dqChecks;
  return Array.isArray(names) ? (names as string[]) : [];
}

function derived<R, B>(
  batch: SourceBatch,
  rowOf: RowOf<R>,
  checks: readonly Check<R>[],
  buildBatch: BuildBatch<R, B>,
): Derived<B> {
  const counts = checks.map(() => ({ passed: 0, failed: 0 }));
  const quarantined: QuarantineNote[] = [];
  const rows: R[] = [];
  const records: SourceRecord[] = [];
  for (const record of batch.records) {
    let row: R | null;
    try {
      row = rowOf(record);
    } catch (error) {
      quarantined.push({ offset: record.offset, reason: 'decode', detail: messageOf(error) });
      continue;
    }
    if (row === null) continue;
    const failures: string[] = [];
    checks.forEach((c, i) => {
      const failure = c.run(row);
      const count = counts[i];
      if (count === undefined) return;
      if (failure === null) count.passed += 1;
      else {
        count.failed += 1;
        failures.push(`dq check '${c.name}' ${failure}`);
      }
    });
    if (failures.length > 0) {
      quarantined.push({ offset: record.offset, reason: 'dq', detail: failures.join('; ') });
      continue;
    }
    rows.push(row);
    records.push(record);
  }
  const dq: Record<string, DqCheckCounts> = {};
  checks.forEach((c, i) => {
    dq[c.name] = counts[i] ?? { passed: 0, failed: 0 };
  });
  const out = rows.length === 0 ? null : buildBatch(rows, { span: batch.span, records });
  return { batch: out, quarantined, dq };
}

/** A check that throws is a failed check with the thrown message, never the end of the lane. */
function guarded<R>(run: (row: R) => string | null): (row: R) => string | null {
  return (row) => {
    try {
      return run(row);
    } catch (error) {
      return `threw: ${messageOf(error)}`;
    }
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
