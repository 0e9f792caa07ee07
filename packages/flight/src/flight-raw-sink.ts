import {
  sourcePartition,
  type HeldPartition,
  type OffsetSpan,
  type PrimaryRawDescriptor,
  type ReplayableSink,
  type SourceBatch,
} from '@thalweg/connector-core';
import { decodeRawBatch, encodeRawBatch, rawSchema, spanFromJson } from '@thalweg/sink-files';
import { RecordBatch } from 'apache-arrow';
import { FlightError } from './errors.js';
import type { FlightClient } from './flight-client.js';
import { FlightSink, type FlightSinkBatch, type FlightSinkOptions } from './flight-sink.js';

export interface FlightRawSinkOptions extends Omit<
  FlightSinkOptions<'primary-raw', SourceBatch>,
  'schema' | 'encode'
> {
  /** The source's cluster, hashed into record ids by whoever derives from raw (ADR 0003). */
  readonly cluster: string;
}

/**
 * A Flight sink in the primary-raw role: each source batch is written as a
 * raw envelope batch (sink-files' mapping: offset, timestamp, key, value,
 * headers) to the dataset, and read back by window (ticket
 * `{"dataset","topic","partition","from","to"}`), which recovery needs.
 *
 * `held()` is a DoGet of the whole dataset: the server has no index call in
 * our conventions, so it moves every stored batch to learn the spans from
 * their app_metadata. It is exact, and costs a full read of the dataset;
 * recovery calls it once at start.
 */
export class FlightRawSink
  extends FlightSink<'primary-raw', SourceBatch>
  implements ReplayableSink<SourceBatch>
{
  declare readonly descriptor: PrimaryRawDescriptor;
  readonly cluster: string;
  private readonly client: FlightClient;
  private readonly dataset: string;

  constructor(options: FlightRawSinkOptions) {
    const schema = rawSchema();
    super(
      {
        ...options,
        schema,
        encode: (batch) => rawEnvelope(options.cluster, batch),
      },
      {
        id: options.id,
        kind: 'flight',
        durability: { kind: 'server-ack' },
        recovery: { kind: 'readable' },
      },
    );
    this.cluster = options.cluster;
    this.client = options.client;
    this.dataset = options.dataset;
  }

  /**
   * The stored records of `span`, in offset order, as one batch per stored
   * batch trimmed to the window. A record stored twice (a batch written
   * again after a failed stream) is yielded once.
   */
  async *read(span: OffsetSpan, signal?: AbortSignal): AsyncIterable<SourceBatch> {
    const ticket = {
      dataset: this.dataset,
      topic: span.topic,
      partition: span.partition,
      from: span.start,
      to: span.end,
    };
    const stored: { span: OffsetSpan; batch: RecordBatch }[] = [];
    for await (const got of this.client.doGet(encodeJson(ticket), signal)) {
      stored.push({ span: storedSpan(got.appMetadata), batch: got.batch });
    }
    // Stored in arrival order; a window may hold copies and out-of-order
    // appends (a replay), so they are ordered by start and deduplicated here.
    stored.sort((a, b) => a.span.start - b.span.start);
    let next = span.start;
    for (const s of stored) {
      const records = decodeRawBatch(s.batch).filter(
        (r) => r.offset >= next && r.offset < span.end,
      );
      const start = Math.max(next, s.span.start, span.start);
      const end = Math.min(s.span.end, span.end);
      if (end <= start) continue;
      next = end;
      yield { span: { topic: span.topic, partition: span.partition, start, end }, records };
    }
  }

  /** Every stored span, per partition, merged and ascending (one DoGet of the whole dataset). */
  async held(): Promise<readonly HeldPartition[]> {
    const byPartition = new Map<string, OffsetSpan[]>();
    for await (const got of this.client.doGet(encodeJson({ dataset: this.dataset }))) {
      const span = storedSpan(got.appMetadata);
      const key = JSON.stringify([span.topic, span.partition]);
      const list = byPartition.get(key) ?? [];
      list.push(span);
      byPartition.set(key, list);
    }
    return [...byPartition.values()].map((spans) => {
      const first = spans[0] as OffsetSpan;
      return { partition: sourcePartition(first.topic, first.partition), spans: merged(spans) };
    });
  }
}

/** A source batch as the raw envelope written (its span travels in the app_metadata, not the schema). */
function rawEnvelope(cluster: string, batch: SourceBatch): FlightSinkBatch {
  const envelope = encodeRawBatch(cluster, batch);
  let bytes = 0;
  for (const r of batch.records) bytes += r.value.byteLength + (r.key?.byteLength ?? 0) + 32;
  return {
    batch: new RecordBatch(rawSchema(), envelope.data),
    records: batch.records.length,
    bytes,
  };
}

function storedSpan(meta: Uint8Array | null): OffsetSpan {
  let parsed: unknown;
  try {
    parsed = meta === null ? null : JSON.parse(new TextDecoder().decode(meta));
  } catch {
    parsed = null;
  }
  try {
    return spanFromJson(parsed, undefined, 'a stored batch app_metadata');
  } catch (cause) {
    throw new FlightError(
      'TWG_FLIGHT_METADATA_INVALID',
      `a stored batch's app_metadata is not {"topic","partition","start","end"}`,
      {},
      { cause },
    );
  }
}

function merged(spans: OffsetSpan[]): OffsetSpan[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: OffsetSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && s.start <= last.end) {
      out[out.length - 1] = { ...last, end: Math.max(last.end, s.end) };
    } else out.push({ ...s });
  }
  return out;
}

function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}
