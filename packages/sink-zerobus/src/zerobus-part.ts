import type { RecordBatch } from 'apache-arrow';
import {
  mapRecords,
  recordJson,
  type Derivation,
  type LaneSettings,
  type SecondaryPart,
  type SourceRecord,
} from '@thalweg/connector-core';
import { BatchBuilder, type BatchSchema, type Row } from '@thalweg/stream-arrow';
import type { Catalog } from './catalog/catalog.js';
import { parseZerobusConfig, type ZerobusConfigInput } from './config.js';
import type { TransportFactory } from './transport.js';
import { ZerobusSink } from './zerobus-sink.js';
import type { ZerobusSinkStats } from './zerobus-stats.js';

/** A Zerobus secondary, declared: the table, the one schema, the transport and the row of each record. */
export interface ZerobusPartOptions extends ZerobusConfigInput {
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
   * The row of one record: an object keyed by the schema's field names
   * (other properties are ignored). Throwing quarantines that record
   * (`RecordRefused` gives the reason, any other error is `decode`); a row
   * the schema refuses (a missing non-nullable field, a value of the wrong
   * type) is quarantined as `contract`, naming the field. `jsonRow()` is
   * the row of a JSON payload. Must be deterministic: recovery derives the
   * same raw batch again.
   */
  readonly row: (record: SourceRecord) => object;
  /** The live table's columns, read at the first submit; batches are reconciled with them. */
  readonly catalog?: Catalog;
  /** The lane between raw and this sink. */
  readonly lane?: LaneSettings;
}

/**
 * The row of a JSON payload: the record's value parsed as UTF-8 JSON (a
 * payload that is not is quarantined as `decode`), then given to `map` when
 * one is given (its record too). What it returns is checked against the
 * schema like any row, so a value that is not an object is `contract`.
 */
export function jsonRow(
  map?: (value: unknown, record: SourceRecord) => object,
): (record: SourceRecord) => object {
  return (record) => {
    // recordJson throws naming the offset; mapRecords quarantines that as decode.
    const value = recordJson(record);
    // Not narrowed: the schema check refuses a value that is not an object, as `contract`.
    return map === undefined ? (value as object) : map(value, record);
  };
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
export function zerobus(options: ZerobusPartOptions): SecondaryPart<RecordBatch, ZerobusSinkStats> {
  const { schema, transport, row, catalog, lane, ...config } = options;
  // Refused at declaration, naming the key, rather than when the topology opens.
  parseZerobusConfig(config);
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
        factory: transport,
        confirm: context.confirm,
        log: context.log.info,
        debug: context.log.debug,
      });
      const derive: Derivation<RecordBatch> = (batch, derivation) => {
        const mapped = mapRecords(batch, derivation, row);
        const rows: Row[] = [];
        const offsets: number[] = [];
        const payloads: Uint8Array[] = [];
        mapped.records.forEach((record, i) => {
          const value = mapped.mapped[i];
          try {
            builder.validateRow(value, rows.length);
          } catch (error) {
            const detail = error instanceof Error ? error.message : String(error);
            derivation.quarantine(record, 'contract', detail);
            return;
          }
          // validateRow accepted it: an object with every field fitting the schema.
          rows.push(value as Row);
          offsets.push(record.offset);
          payloads.push(record.value);
        });
        if (rows.length === 0) return null;
        const { topic, partition } = batch.span;
        const provenance =
          schema.recordId === 'none'
            ? undefined
            : { cluster: context.cluster, topic, partition, offsets, payloads };
        return builder.fromRows(rows, provenance);
      };
      return { sink, derive, stats: () => sink.stats() };
    },
  };
}
