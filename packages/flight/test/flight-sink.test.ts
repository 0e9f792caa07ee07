import {
  derivedCoverage,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type OffsetSpan,
  type Receipt,
} from '@thalweg/connector-core';
import type { RecordBatch } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import type { FlightClient } from '../src/flight-client.js';
import type { FlightPutBatch } from '../src/flight-server.js';
import { FlightSink } from '../src/flight-sink.js';
import { ROWS_SCHEMA, deferred, rowsBatch, text, utf8, type Deferred } from './fixtures.js';
import { flightHarness, isPending } from './flight-harness.js';

const { serve } = flightHarness();
const ID = sinkId('flight');

/** Records every confirmation, and wakes a waiter once `count` have come. */
class Recorder implements ConfirmTarget<'secondary'> {
  readonly confirmed: number[] = [];
  private waiters: { count: number; wake: () => void }[] = [];
  apply(_confirm: Confirm<'secondary'>, receipt: Receipt): Promise<void> {
    this.confirmed.push(receipt.span.start);
    for (const w of this.waiters.splice(0)) {
      if (this.confirmed.length >= w.count) w.wake();
      else this.waiters.push(w);
    }
    return Promise.resolve();
  }
  /** Resolves once `count` batches were confirmed. */
  reached(count: number): Promise<void> {
    if (this.confirmed.length >= count) return Promise.resolve();
    return new Promise((wake) => this.waiters.push({ count, wake }));
  }
}

const span = (i: number): OffsetSpan => ({
  topic: 't',
  partition: 0,
  start: i * 10,
  end: i * 10 + 10,
});

function sinkOver(client: FlightClient, target: Recorder): FlightSink<'secondary', RecordBatch> {
  return new FlightSink<'secondary', RecordBatch>({
    id: ID,
    client,
    dataset: 'orders',
    schema: ROWS_SCHEMA,
    encode: (batch) => ({ batch, records: batch.numRows, bytes: 64 }),
    confirm: target,
    log: () => undefined,
  });
}

const batch = (i: number) => rowsBatch([{ id: BigInt(i), payload: `row ${i}`, ts: i }]);

/** A server whose PutResults are released by the test, batch by batch (by seq). */
async function heldServer(count: number): Promise<{
  client: FlightClient;
  acks: Deferred<'ack' | 'fail'>[];
  received: FlightPutBatch[];
  allReceived: Promise<undefined>;
}> {
  const acks = Array.from({ length: count }, () => deferred<'ack' | 'fail'>());
  const received: FlightPutBatch[] = [];
  const all = deferred<undefined>();
  const client = await serve({
    doPut: async (put) => {
      received.push(put);
      if (received.length === count) all.resolve(undefined);
      const outcome = await acks[put.seq - 1]?.promise;
      if (outcome === 'fail') throw new Error('disk on fire');
      return utf8(JSON.stringify({ seq: put.seq }));
    },
  });
  return { client, acks, received, allReceived: all.promise };
}

describe('FlightSink', () => {
  it('writes every batch before any PutResult, with the seq and span as app_metadata', async () => {
    const { client, acks, received, allReceived } = await heldServer(3);
    const target = new Recorder();
    const sink = sinkOver(client, target);
    for (let i = 0; i < 3; i++) await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i)));
    await allReceived;
    expect(received.map((p) => text(p.appMetadata))).toEqual([
      '{"seq":1,"topic":"t","partition":0,"start":0,"end":10}',
      '{"seq":2,"topic":"t","partition":0,"start":10,"end":20}',
      '{"seq":3,"topic":"t","partition":0,"start":20,"end":30}',
    ]);
    expect(received.map((p) => p.descriptor)).toEqual(
      Array(3).fill({ type: 'path', path: ['orders'] }),
    );
    expect(target.confirmed).toEqual([]);
    for (const a of acks) a.resolve('ack');
    await sink.flush();
    expect(target.confirmed).toEqual([0, 10, 20]);
    await sink.close();
  });

  it('confirms in order, each batch only after its own PutResult (late, out of order)', async () => {
    const { client, acks, allReceived } = await heldServer(4);
    const target = new Recorder();
    const sink = sinkOver(client, target);
    for (let i = 0; i < 4; i++) await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i)));
    await allReceived;
    // 2 and 4 first: nothing may be confirmed, batch 1 has no PutResult.
    acks[1]?.resolve('ack');
    acks[3]?.resolve('ack');
    const flushed = sink.flush();
    expect(await isPending(flushed)).toBe(true);
    expect(target.confirmed).toEqual([]);
    // 1 comes: 1 and 2 are confirmed, not 4 (3 is still owed).
    acks[0]?.resolve('ack');
    await target.reached(2);
    expect(await isPending(flushed)).toBe(true);
    expect(target.confirmed).toEqual([0, 10]);
    acks[2]?.resolve('ack');
    await flushed;
    expect(target.confirmed).toEqual([0, 10, 20, 30]);
    await sink.close();
  });

  it('a failed DoPut confirms what was acknowledged and nothing after; flush rejects once', async () => {
    const { client, acks, allReceived } = await heldServer(4);
    const target = new Recorder();
    const sink = sinkOver(client, target);
    for (let i = 0; i < 4; i++) await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i)));
    await allReceived;
    // 1 and 3 acknowledged, then the server fails the call on batch 2.
    acks[0]?.resolve('ack');
    acks[2]?.resolve('ack');
    await target.reached(1);
    acks[1]?.resolve('fail');
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_FLIGHT_CALL_FAILED' });
    acks[3]?.resolve('ack');
    // Batch 3's PutResult came, but batch 2's never did: 3 stays a gap too.
    expect(target.confirmed).toEqual([0]);
    await sink.flush();
    expect(target.confirmed).toEqual([0]);
    await sink.close();
  });

  it('opens a new DoPut for the batches after a failed one, and confirms them', async () => {
    let calls = 0;
    const seqs: number[] = [];
    const client = await serve({
      doPut: (put) => {
        if (put.seq === 1) calls += 1;
        seqs.push(put.seq);
        if (calls === 1) return Promise.reject(new Error('first stream dies'));
        return Promise.resolve(utf8(JSON.stringify({ seq: put.seq })));
      },
    });
    const target = new Recorder();
    const sink = sinkOver(client, target);
    await sink.submit(batch(0), span(0), derivedCoverage(ID, span(0)));
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_FLIGHT_CALL_FAILED' });
    await sink.submit(batch(1), span(1), derivedCoverage(ID, span(1)));
    await sink.submit(batch(2), span(2), derivedCoverage(ID, span(2)));
    await sink.flush();
    expect(target.confirmed).toEqual([10, 20]);
    expect(sink.streamsOpened).toBe(2);
    expect(seqs).toEqual([1, 1, 2]);
    await sink.close();
  });

  it('a PutResult for a seq never written ends the stream without confirming', async () => {
    const client = await serve({
      doPut: () => Promise.resolve(utf8('{"seq":99}')),
    });
    const target = new Recorder();
    const sink = sinkOver(client, target);
    await sink.submit(batch(0), span(0), derivedCoverage(ID, span(0)));
    await expect(sink.flush()).rejects.toMatchObject({ code: 'TWG_FLIGHT_PUT_RESULT_INVALID' });
    expect(target.confirmed).toEqual([]);
    await sink.close();
  });

  it('counts bursts and deliveries on its one lane, labelled by the dataset', async () => {
    const client = await serve({
      doPut: (put) => Promise.resolve(utf8(JSON.stringify({ seq: put.seq }))),
    });
    const target = new Recorder();
    const sink = sinkOver(client, target);
    for (let i = 0; i < 5; i++) await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i)));
    await sink.flush();
    const [lane] = sink.lanes();
    expect(lane?.stream).toBe('orders');
    expect(lane?.metrics.delivered.value).toBe(5);
    await sink.close();
    await expect(
      sink.submit(batch(9), span(9), derivedCoverage(ID, span(9))),
    ).rejects.toMatchObject({ code: 'TWG_FLIGHT_STATE' });
  });

  it('takes the PutResults that came while a confirmation was being applied', async () => {
    const { client, acks, allReceived } = await heldServer(4);
    const gate = deferred<undefined>();
    const started = deferred<undefined>();
    const confirmed: number[] = [];
    const slow: ConfirmTarget<'secondary'> = {
      apply: async (_confirm, receipt) => {
        started.resolve(undefined);
        if (receipt.span.start === 0) await gate.promise;
        confirmed.push(receipt.span.start);
      },
    };
    const sink = new FlightSink<'secondary', RecordBatch>({
      id: ID,
      client,
      dataset: 'orders',
      schema: ROWS_SCHEMA,
      encode: (b) => ({ batch: b, records: b.numRows, bytes: 64 }),
      confirm: slow,
      log: () => undefined,
    });
    for (let i = 0; i < 4; i++) await sink.submit(batch(i), span(i), derivedCoverage(ID, span(i)));
    await allReceived;
    // Batch 1 is confirmed alone (its burst was taken first), and its
    // confirmation is held; batches 2..4 are the next burst.
    acks[0]?.resolve('ack');
    await started.promise;
    // Batch 2's hand-over waits behind the held confirmation; 3 and 4 are
    // acknowledged meanwhile, and their wake-up must not be lost.
    acks[1]?.resolve('ack');
    const flushed = sink.flush();
    expect(await isPending(flushed)).toBe(true);
    acks[2]?.resolve('ack');
    acks[3]?.resolve('ack');
    for (let i = 0; i < 50; i++) expect(await isPending(flushed)).toBe(true);
    gate.resolve(undefined);
    await flushed;
    expect(confirmed).toEqual([0, 10, 20, 30]);
    await sink.close();
  });
});
