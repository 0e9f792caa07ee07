import type {
  LaneMetrics,
  LaneSettings,
  RawPart,
  SecondaryPart,
  SourceRecord,
} from '@thalweg/connector-core';
import { BatchBuilder, rowsToBatch, type BatchSchema } from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { FlightError } from './errors.js';
import { flightClient, type FlightClient } from './flight-client.js';
import { FlightRawSink } from './flight-raw-sink.js';
import { DEFAULT_FLIGHT_MAX_IN_FLIGHT, FlightSink } from './flight-sink.js';

/** What a Flight sink part reports: the DoPut streams it opened and its lane. */
export interface FlightSinkStats {
  readonly dataset: string;
  readonly streamsOpened: number;
  readonly lanes: readonly LaneMetrics[];
}

interface FlightSinkCommon {
  /** `grpc://host:port` of the Flight server, or a client to share. */
  readonly url: string | FlightClient;
  /** The dataset written (descriptor PATH [dataset]). */
  readonly dataset: string;
  /** Batches written and not yet acknowledged, at most (default 256). */
  readonly maxInFlight?: number;
}

/** A Flight secondary: rows derived from raw as every Arrow secondary derives them. */
export interface FlightSecondaryOptions extends FlightSinkCommon {
  readonly readBack?: false;
  /** The batches' schema, declared once (with `recordId` the rows carry raw's id). */
  readonly schema: BatchSchema;
  /** The row of one record; throwing quarantines it. Deterministic: recovery derives again. */
  readonly row: (record: SourceRecord) => object;
  readonly lane?: LaneSettings;
}

/** A Flight primary raw: the source batches as raw envelopes, read back by window. */
export interface FlightRawOptions extends FlightSinkCommon {
  readonly readBack: true;
  /** The sink id (default `raw`). */
  readonly id?: string;
}

/**
 * A Flight sink declared for `openTopology`: a secondary (the default), or
 * with `readBack: true` the primary raw, since our server reads a dataset
 * back by window (ADR 0033). The id, the confirmation target, the cluster
 * and the logger come from the topology.
 */
export function flightSink(
  options: FlightRawOptions,
): RawPart<FlightSinkStats> & { readonly role: 'primary-raw' };
export function flightSink(
  options: FlightSecondaryOptions,
): SecondaryPart<RecordBatch, FlightSinkStats>;
export function flightSink(
  options: FlightRawOptions | FlightSecondaryOptions,
): RawPart<FlightSinkStats> | SecondaryPart<RecordBatch, FlightSinkStats> {
  checkCommon(options);
  const clientOf = () =>
    typeof options.url === 'string' ? flightClient(options.url) : options.url;
  const describe = () =>
    `dataset=${options.dataset} maxInFlight=${options.maxInFlight ?? DEFAULT_FLIGHT_MAX_IN_FLIGHT}`;
  const statsOf = (sink: FlightSink<never, never> | FlightRawSink): FlightSinkStats => ({
    dataset: options.dataset,
    streamsOpened: sink.streamsOpened,
    lanes: sink.lanes(),
  });
  if (options.readBack === true) {
    return {
      role: 'primary-raw',
      ...(options.id === undefined ? {} : { id: options.id }),
      open(context) {
        context.log.debug(`thalweg flight sink ${context.id}: ${describe()} readBack=true`);
        const sink = new FlightRawSink({
          id: context.id,
          client: clientOf(),
          dataset: options.dataset,
          cluster: context.cluster,
          confirm: context.confirm,
          ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
          log: context.log.info,
        });
        return { sink, stats: () => statsOf(sink) };
      },
    };
  }
  const { schema, row, lane } = options;
  const builder = new BatchBuilder(schema);
  return {
    role: 'secondary',
    ...(lane === undefined ? {} : { lane }),
    open(context) {
      context.log.debug(`thalweg flight sink ${context.id}: ${describe()}`);
      const sink = new FlightSink<'secondary', RecordBatch>({
        id: context.id,
        client: clientOf(),
        dataset: options.dataset,
        schema: schema.arrow,
        encode: (batch) => ({ batch, records: batch.numRows, bytes: arrowBytes(batch) }),
        confirm: context.confirm,
        ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
        log: context.log.info,
      });
      const derive = rowsToBatch(builder, row, context.cluster);
      return { sink, derive, stats: () => statsOf(sink as FlightSink<never, never>) };
    },
  };
}

/** The bytes of a batch's buffers: what it holds in memory while in flight. */
export function arrowBytes(batch: RecordBatch): number {
  let bytes = 0;
  const visit = (data: {
    buffers: readonly (ArrayBufferView | undefined | null)[];
    children: readonly unknown[];
  }) => {
    for (const b of data.buffers) bytes += b?.byteLength ?? 0;
    for (const c of data.children) visit(c as typeof data);
  };
  visit(batch.data as unknown as Parameters<typeof visit>[0]);
  return bytes;
}

function checkCommon(options: FlightSinkCommon): void {
  if (typeof options.dataset !== 'string' || options.dataset === '') {
    throw new FlightError('TWG_FLIGHT_MISUSE', 'flightSink.dataset: a non-empty dataset name');
  }
  const max = options.maxInFlight;
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 1)) {
    throw new FlightError('TWG_FLIGHT_MISUSE', `flightSink.maxInFlight: ${max} is not a count`);
  }
}
