import {
  derivedCoverage,
  rawAnchor,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type Lane,
  type OffsetSpan,
  type Receipt,
  type SourceBatch,
} from '@thalweg/connector-core';
import { flight, uniqueName } from '@thalweg/test-services';
import type { RecordBatch } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { flightClient } from '../src/flight-client.js';
import { FlightRawSink } from '../src/flight-raw-sink.js';
import { FlightSink } from '../src/flight-sink.js';
import { ROWS_SCHEMA, rowsBatch } from './fixtures.js';
import { action, pyarrowReadBack, readBackOf } from './flight-peer.js';

const client = flightClient(flight().url);
afterAll(() => client.close());
const ID = sinkId('flight');

class Recorder<L extends Lane> implements ConfirmTarget<L> {
  readonly confirmed: OffsetSpan[] = [];
  apply(_confirm: Confirm<L>, receipt: Receipt): Promise<void> {
    this.confirmed.push(receipt.span);
    return Promise.resolve();
  }
}

const span = (i: number): OffsetSpan => ({
  topic: 't',
  partition: 0,
  start: i * 3,
  end: i * 3 + 3,
});
const batch = (i: number) =>
  rowsBatch(
    [0, 1, 2].map((j) => ({ id: BigInt(i * 3 + j), payload: `row ${i * 3 + j} é`, ts: i * 3 + j })),
  );

function secondary(dataset: string, target: Recorder<'secondary'>) {
  return new FlightSink<'secondary', RecordBatch>({
    id: ID,
    client,
    dataset,
    schema: ROWS_SCHEMA,
    encode: (b) => ({ batch: b, records: b.numRows, bytes: 64 }),
    confirm: target,
    log: () => undefined,
  });
}

async function stored(dataset: string): Promise<RecordBatch[]> {
  const out: RecordBatch[] = [];
  for await (const got of client.doGet(new TextEncoder().encode(JSON.stringify({ dataset })))) {
    out.push(got.batch);
  }
  return out;
}

describe('FlightSink against pyarrow', () => {
  it('writes N batches with late, reordered PutResults; confirms all in order; pyarrow reads the same', async () => {
    const dataset = uniqueName('twg-sink');
    await action(client, 'configure', { dataset, ack_delay_ms: 20, reorder: true });
    const target = new Recorder<'secondary'>();
    const sink = secondary(dataset, target);
    const sent: RecordBatch[] = [];
    for (let i = 0; i < 25; i++) {
      sent.push(batch(i));
      await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i)));
    }
    // The server holds the PutResult of a last odd batch (reorder pairs them)
    // until the call is half-closed: close() ends it, then waits for it.
    await sink.close();
    expect(target.confirmed).toEqual(Array.from({ length: 25 }, (_, i) => span(i)));
    const ours = readBackOf(await stored(dataset));
    expect(ours).toEqual(readBackOf(sent));
    expect(await pyarrowReadBack(dataset)).toEqual(ours);
    await action(client, 'drop', { dataset });
  });

  it('a DoPut failed by fail_after confirms only the acknowledged batches, all of them stored', async () => {
    const dataset = uniqueName('twg-sink-fail');
    await action(client, 'configure', { dataset, ack_delay_ms: 20, fail_after: 5 });
    const target = new Recorder<'secondary'>();
    const sink = secondary(dataset, target);
    for (let i = 0; i < 10; i++) {
      await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i))).catch(() => undefined);
    }
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_FLIGHT_CALL_FAILED' });
    expect(target.confirmed).toEqual(Array.from({ length: 5 }, (_, i) => span(i)));
    // Coverage is never ahead: what was confirmed is what the server stored.
    const held = readBackOf(await stored(dataset));
    expect(held).toEqual(readBackOf(Array.from({ length: 5 }, (_, i) => batch(i))));
    await sink.close();
    await action(client, 'drop', { dataset });
  });

  it('as primary raw: source batches read back by window, trimmed, and held() names the spans', async () => {
    const dataset = uniqueName('twg-raw');
    await action(client, 'configure', { dataset, ack_delay_ms: 5, reorder: true });
    const target = new Recorder<'primary-raw'>();
    const sink = new FlightRawSink({
      id: sinkId('raw'),
      client,
      dataset,
      cluster: 'c1',
      confirm: target,
      log: () => undefined,
    });
    const batches: SourceBatch[] = Array.from({ length: 4 }, (_, i) => ({
      span: { topic: 't', partition: 1, start: i * 10, end: i * 10 + 10 },
      records: Array.from({ length: 10 }, (_, j) => ({
        offset: i * 10 + j,
        key: j % 2 === 0 ? null : Buffer.from(`k${j}`),
        value: Buffer.from(`v${i * 10 + j}`),
        timestamp: 1_700_000_000_000 + j,
        headers: [],
      })),
    }));
    for (const b of batches) await sink.submit(b, b.span, rawAnchor(b.span));
    await sink.flush();
    expect(target.confirmed).toEqual(batches.map((b) => b.span));
    const window: SourceBatch[] = [];
    for await (const b of sink.read({ topic: 't', partition: 1, start: 15, end: 32 })) {
      window.push(b);
    }
    expect(window.map((b) => [b.span.start, b.span.end])).toEqual([
      [15, 20],
      [20, 30],
      [30, 32],
    ]);
    expect(window.flatMap((b) => b.records.map((r) => Buffer.from(r.value).toString()))).toEqual(
      Array.from({ length: 17 }, (_, i) => `v${15 + i}`),
    );
    expect(Buffer.from(window[0]?.records[0]?.key ?? []).toString()).toBe('k5');
    expect(await sink.held()).toEqual([
      {
        partition: { topic: 't', partition: 1 },
        spans: [{ topic: 't', partition: 1, start: 0, end: 40 }],
      },
    ]);
    await sink.close();
    await action(client, 'drop', { dataset });
  });
});
