import {
  describeSourceContract,
  type ExpectedRecord,
  type SourceFeatures,
  type WrittenRecord,
} from '@thalweg/contracts';
import { BASE_TS_MS, flight, uniqueName } from '@thalweg/test-services';
import { afterAll } from 'vitest';
import { flightClient } from '../src/flight-client.js';
import { FlightSource } from '../src/flight-source.js';
import { action } from './flight-peer.js';

const client = flightClient(flight().url);
const streams: string[] = [];
afterAll(async () => {
  for (const stream of streams.splice(0)) await action(client, 'drop', { stream });
  client.close();
});

/**
 * One resumable live stream of pyarrow's Flight server, one partition. Its
 * rows are (id, payload, ts): no key, no header, no delete marker; a cursor
 * may name any row, since the server restarts at the batch holding it and
 * the source drops what comes before.
 */
const FEATURES: SourceFeatures = {
  partitions: 1,
  keys: false,
  headers: false,
  nullHeaderValues: false,
  tombstones: false,
  cursors: 'any-offset',
  offsets: 'dense',
};

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

describeSourceContract('FlightSource, resumable, against pyarrow', {
  features: FEATURES,
  timeoutMs: 30_000,
  seed: async (written: readonly (readonly WrittenRecord[])[]) => {
    const records = written[0] ?? [];
    const stream = uniqueName('twg-contract');
    streams.push(stream);
    // The server serves these payloads as its rows, three to a batch.
    await action(client, 'generate', {
      stream,
      payloads: records.map((r) => text(r.value)),
      batch_rows: 3,
    });
    // Each row as the source renders it: an int64 as a decimal string, a
    // timestamp as ISO 8601 (row-json.ts).
    const expected: ExpectedRecord[] = records.map((r, id) => ({
      offset: id,
      key: null,
      value: new TextEncoder().encode(
        JSON.stringify({
          id: String(id),
          payload: text(r.value),
          ts: new Date(BASE_TS_MS + id).toISOString(),
        }),
      ),
      headers: [],
    }));
    return {
      logs: [{ partition: { topic: stream, partition: 0 }, records: expected }],
      open: () => Promise.resolve(new FlightSource({ url: flight().url, stream, resumable: true })),
    };
  },
});
