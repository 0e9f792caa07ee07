import {
  functionOption,
  mapRecords,
  memoryShare,
  parseConfig,
  RecordRefused,
  type SyncDerivation,
  type LaneSettings,
  type SecondaryPart,
  type SourcePartition,
  type SourceRecord,
} from '@thalweg/connector-core';
import { z } from 'zod';
import type { PgBatch, PgRow } from './pg-batch.js';
import { PostgresSink } from './postgres-sink.js';
import { DEFAULT_QUEUED_BYTES, type PostgresSinkOptions } from './sink-options.js';
import type { PostgresSinkStats } from './sink-stats.js';
import { pgTableSpecSchema, qualifiedName, type PgTableSpec } from './table-spec.js';

/**
 * A PostgreSQL secondary, declared. The sink's options without what the
 * topology gives it (its id, its confirmation target, the logger).
 * `coverage` stays optional and is rarely wanted: the topology's coverage
 * store is the one recovery reads, and it records each span after the
 * commit. Give it when that store (or an audit of the table) is a
 * PostgresCoverage on this same database, so the spans commit with the
 * rows.
 */
export interface PostgresPartOptions extends Omit<PostgresSinkOptions, 'id' | 'confirm' | 'log'> {
  /**
   * A record's column values, in the order of `table.columns`, given the
   * record and the partition it was read from (a record does not carry
   * it). The part adds the record's `_twg_record_id`. A throw quarantines that record:
   * with the reason of a `RecordRefused`, `decode` for any other error.
   * Values of the wrong count are quarantined as `contract`. It must be
   * deterministic: recovery maps the same record again.
   */
  readonly row: RowMapping;
  /** The secondary's lane between raw and this sink. */
  readonly lane?: LaneSettings;
}

/** A record and the partition it was read from -> its column values. */
export type RowMapping = (record: SourceRecord, from: SourcePartition) => readonly unknown[];

/** The root of the part's option paths (the shared convention, parse-config.ts). */
const PATH = 'postgres';

/** What can be checked at declaration: the rest is the sink's to check when it opens. */
const declaredSchema = z.looseObject({
  table: pgTableSpecSchema,
  row: functionOption<RowMapping>(),
  // What the topology gives: refused here for JavaScript callers, not overridden silently.
  id: given('the id is the key the part is declared under in secondaries'),
  confirm: given('the topology gives the confirmation target'),
  log: given("the part logs through the topology's log"),
});

function given(reason: string) {
  return z.never({ error: `is not an option of postgres(): ${reason}` }).optional();
}

/**
 * Declares a PostgreSQL secondary: the topology opens it (`openTopology`
 * in `@thalweg/pipeline`) with its id, the source's cluster and its
 * confirmation target, and maps each raw record through `row`.
 *
 * With `connectionString` the sink creates its pool and ends it when it
 * closes; a `pool` given here stays the caller's, who ends it after the
 * topology closed. Without a `maxQueuedBytes`, the sink's queue holds at
 * most a thirty-second of the topology's memory limit, at most 32 MiB. The
 * table and `row` are checked here, the rest when the part opens; a
 * refusal names the field.
 */
export function postgres(options: PostgresPartOptions): SecondaryPart<PgBatch, PostgresSinkStats> {
  parseConfig(declaredSchema, options, PATH);
  const { row, lane, onError, ...sinkOptions } = options;
  const derive = rowDerivation(options.table, row);
  return {
    role: 'secondary',
    ...(lane === undefined ? {} : { lane }),
    async open(context) {
      const sink = await PostgresSink.open({
        ...sinkOptions,
        maxQueuedBytes:
          sinkOptions.maxQueuedBytes ??
          memoryShare(context.memoryLimitBytes, 32, DEFAULT_QUEUED_BYTES),
        id: context.id,
        confirm: context.confirm,
        log: context.log.debug,
        onError:
          onError ??
          ((error) => {
            context.log.info(`thalweg sink-postgres ${context.id}: ${error.message}`);
          }),
      });
      return { sink, derive, stats: () => sink.stats() };
    },
  };
}

/**
 * Raw batch -> rows: each record's values from `row`, keyed by the id raw
 * gave it. A record whose mapping throws or has the wrong width is
 * quarantined alone; a batch with no row left is null.
 */
export function rowDerivation(table: PgTableSpec, row: RowMapping): SyncDerivation<PgBatch> {
  const width = table.columns.length;
  const name = qualifiedName(table);
  return (batch, context) => {
    // Only topic and partition: a row must not depend on where a batch was cut.
    const from: SourcePartition = { topic: batch.span.topic, partition: batch.span.partition };
    const { mapped } = mapRecords(batch, context, (record): PgRow => {
      const values: unknown = row(record, from);
      if (!Array.isArray(values) || values.length !== width) {
        const found = Array.isArray(values) ? `${values.length} values` : typeof values;
        throw new RecordRefused(
          'contract',
          `row() of the record at offset ${record.offset} returned ${found}; table ${name} has ${width} columns`,
        );
      }
      return { recordId: context.recordId(record), values };
    });
    return mapped.length === 0 ? null : { rows: mapped };
  };
}
