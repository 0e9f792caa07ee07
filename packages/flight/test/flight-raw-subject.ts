import { sinkId, type ConfirmTarget, type SourceBatch } from '@thalweg/connector-core';
import {
  CONTRACT_CLUSTER,
  contractRecordId,
  type HeldRecord,
  type SinkSubject,
} from '@thalweg/contracts';
import type { FlightClient } from '../src/flight-client.js';
import { FlightRawSink } from '../src/flight-raw-sink.js';

const text = new TextDecoder();

/** A Flight raw sink over `client`'s server, its store read back through the sink's own read path. */
export function flightRawSubject(
  client: FlightClient,
  dataset: string,
  target: ConfirmTarget<'primary-raw'>,
  release: () => Promise<void>,
): SinkSubject<'primary-raw', SourceBatch> {
  const sink = new FlightRawSink({
    id: sinkId('raw'),
    client,
    dataset,
    cluster: CONTRACT_CLUSTER,
    confirm: target,
    log: () => undefined,
  });
  return {
    sink,
    batch: (records, span) => ({
      span,
      records: records.map((r) => ({
        offset: r.offset,
        key: null,
        value: r.bytes,
        timestamp: 0,
        headers: [],
      })),
    }),
    // What the server holds, read back by window (a fresh DoGet, not the sink's memory).
    held: async () => {
      const out: HeldRecord[] = [];
      const spans = await sink.held().catch(() => []);
      for (const { partition, spans: list } of spans) {
        for (const span of list) {
          for await (const batch of sink.read(span)) {
            for (const r of batch.records) {
              out.push({
                idHex: contractRecordId(partition, r.offset, r.value),
                value: text.decode(r.value),
              });
            }
          }
        }
      }
      return out;
    },
    // A record outside the span the batch claims: refused before anything is written.
    malformed: (records, span) => ({
      span,
      records: records.map((r, i) => ({
        offset: i === 0 ? span.end : r.offset,
        key: null,
        value: r.bytes,
        timestamp: 0,
        headers: [],
      })),
    }),
    reopen: (next) => Promise.resolve(flightRawSubject(client, dataset, next, release)),
    dispose: release,
  };
}
