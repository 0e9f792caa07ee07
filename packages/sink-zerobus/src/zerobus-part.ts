import {
  ConfigError,
  type Derivation,
  type LaneSettings,
  type SecondaryPart,
  type SourceRecord,
} from '@thalweg/connector-core';
import {
  BatchBuilder,
  jsonDerivation,
  jsonRow,
  rowsToBatch,
  type ArrowBatch,
  type BatchSchema,
  type JsonFields,
} from '@thalweg/stream-arrow';
import type { Catalog } from './catalog/catalog.js';
import { parseZerobusConfig, type ZerobusConfigInput } from './config.js';
import type { TransportFactory } from './transport.js';
import { ZerobusSink } from './zerobus-sink.js';
import type { ZerobusSinkStats } from './zerobus-stats.js';

/** A Zerobus secondary, declared: the table, the one schema, the transport and the row of each record. */
export type ZerobusPartOptions = ZerobusPartCommon & ZerobusRows;

/**
 * How each record becomes a row: a function run on the ingest thread, or a
 * JSON mapping declared as data and run on a worker thread (the parse, the
 * columns, the record ids and the IPC encoding all off the ingest thread).
 */
export type ZerobusRows =
  | {
      /**
       * The row of one record: an object keyed by the schema's field names
       * (other properties are ignored). Throwing quarantines that record
       * (`RecordRefused` gives the reason, any other error is `decode`); a row
       * the schema refuses (a missing non-nullable field, a value of the wrong
       * type) is quarantined as `contract`, naming the field. `fromJson(map)` is
       * the row of a JSON payload. Must be deterministic: recovery derives the
       * same raw batch again.
       */
      readonly row: (record: SourceRecord) => object;
      readonly json?: never;
    }
  | {
      /**
       * Each record's value as UTF-8 JSON, each column taken from the path
       * or record metadata `fields` names (by default the payload's key of
       * the column's name), built on a worker thread. A value that is not
       * JSON is quarantined as `decode`, a row the schema refuses as
       * `contract`, as with `row`. Headers and keys are not available to it.
       */
      readonly json: {
        readonly fields?: JsonFields;
        /** Derive on the ingest thread instead (the same bytes; for a process without spare cores). */
        readonly onCallingThread?: boolean;
      };
      readonly row?: never;
    };

/** What every Zerobus secondary declares, whichever way its rows are made. */
export interface ZerobusPartCommon extends ZerobusConfigInput {
  /**
   * The batches' schema, declared once: the batch builder builds by it and
   * the stream's fields are derived from it (`streamFieldsOf`). With
   * `recordId: 'hex'` or `'binary'` each row carries the id raw gave its
   * record.
   */
  readonly schema: BatchSchema;
  /** Opens the streams: `fakeZerobus(...)` in tests, the binding's `SdkTransportFactory` in production. */
  readonly transport: TransportFactory;
  /**
   * The table's catalog: a missing table is created from `schema` at the
   * first submit, and batches are reconciled with the live table's columns
   * (described again when a batch of a new shape arrives).
   */
  readonly catalog?: Catalog;
  /** Table properties for a table created through `catalog` (see `ZerobusSinkDeps`). */
  readonly tableProperties?: Readonly<Record<string, string>>;
  /** The lane between raw and this sink. */
  readonly lane?: LaneSettings;
}

/**
 * A Zerobus secondary part (ADR 0029): opened with the topology's context,
 * it builds a `ZerobusSink` whose id, confirmation target and logger come
 * from that context and whose stream fields come from `schema`, and a
 * derivation that maps each raw record to a row and builds the batch, the
 * record ids hashed from the source's cluster exactly as raw hashes them.
 * The effective settings are logged once at debug; confirmation-target
 * failures and stream rebuilds at info.
 */
export function zerobus(options: ZerobusPartOptions): SecondaryPart<ArrowBatch, ZerobusSinkStats> {
  const { schema, transport, row, json, catalog, tableProperties, lane, ...config } = options;
  // Refused at declaration, naming the key or field, rather than when the topology opens.
  parseZerobusConfig(config);
  // The type allows one or the other; an untyped caller is told the same.
  if ((row === undefined) === (json === undefined)) {
    const given = row === undefined ? 'neither' : 'both';
    throw new ConfigError(
      'zerobus',
      `give row (a function) or json (a declared mapping); ${given} given`,
    );
  }
  if (json !== undefined) jsonRow(schema, json.fields);
  const builder = new BatchBuilder(schema);
  return {
    role: 'secondary',
    ...(lane === undefined ? {} : { lane }),
    open(context) {
      const sink = new ZerobusSink<'secondary'>({
        id: context.id,
        config,
        schema,
        ...(catalog === undefined ? {} : { catalog }),
        ...(tableProperties === undefined ? {} : { tableProperties }),
        factory: transport,
        confirm: context.confirm,
        log: context.log.info,
        debug: context.log.debug,
      });
      if (json === undefined) {
        const derive: Derivation<ArrowBatch> = rowsToBatch(builder, row, context.cluster);
        return { sink, derive, stats: () => sink.stats() };
      }
      const derivation = jsonDerivation({
        schema,
        cluster: context.cluster,
        log: context.log.info,
        ...(json.fields === undefined ? {} : { fields: json.fields }),
        ...(json.onCallingThread === undefined ? {} : { onCallingThread: json.onCallingThread }),
      });
      return {
        sink,
        derive: derivation.derive,
        stats: () => sink.stats(),
        release: () => derivation.close(),
      };
    },
  };
}

/** The derivation `zerobus()` runs: stream-arrow's, shared with the Flight sink. */
export { rowsToBatch };
