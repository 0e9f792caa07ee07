import {
  derivedCoverage,
  rawAnchor,
  recordJson,
  runDerivation,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type Lane,
  type Receipt,
  type SourceBatch,
} from '@thalweg/connector-core';
import { recordingPartContext } from '@thalweg/contracts';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { describe, expect, it } from 'vitest';
import { FlightRawSink } from '../src/flight-raw-sink.js';
import { flightSink } from '../src/flight-sink-part.js';
import { fakeFlightStore } from './fake-flight-store.js';
import { flightHarness } from './flight-harness.js';

const { serve } = flightHarness();

class Recorder<L extends Lane> implements ConfirmTarget<L> {
  readonly receipts: Receipt[] = [];
  apply(_confirm: Confirm<L>, receipt: Receipt): Promise<void> {
    this.receipts.push(receipt);
    return Promise.resolve();
  }
}

const schema = BatchSchema.define({
  fields: [
    { name: 'n', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: false },
  ],
});

const source: SourceBatch = {
  span: { topic: 't', partition: 0, start: 0, end: 3 },
  records: [0, 1, 2].map((offset) => ({
    offset,
    key: null,
    value: Buffer.from(
      JSON.stringify(offset === 1 ? { bad: true } : { n: offset, name: `r${offset}` }),
    ),
    timestamp: 0,
    headers: [],
  })),
};

describe('flightSink()', () => {
  it('as a secondary: derives rows as every Arrow secondary does, quarantines what the schema refuses', async () => {
    const client = await serve(fakeFlightStore());
    const part = flightSink({
      url: client,
      dataset: 'orders',
      schema,
      row: (r) => recordJson(r) as object,
    });
    expect(part.role).toBe('secondary');
    const { context, debug } = recordingPartContext();
    const target = new Recorder<'secondary'>();
    const id = sinkId('flight');
    const opened = await part.open({ ...context, id, cluster: 'c', confirm: target });
    expect(debug).toEqual(['thalweg flight sink flight: dataset=orders maxInFlight=256']);
    const derived = await runDerivation(opened.derive, 'c', source);
    expect(derived.quarantined.map((q) => [q.offset, q.reason])).toEqual([[1, 'contract']]);
    const batch = derived.batch;
    if (batch === null) throw new Error('nothing derived');
    await opened.sink.submit(batch, source.span, derivedCoverage(id, source.span));
    await opened.sink.flush();
    expect(target.receipts.map((r) => [r.records, r.durability])).toEqual([[2, 'server-ack']]);
    expect(opened.stats()).toMatchObject({ dataset: 'orders', streamsOpened: 1 });
    await opened.sink.close();
  });

  it('with readBack: the primary raw, readable by window', async () => {
    const client = await serve(fakeFlightStore());
    const part = flightSink({ url: client, dataset: 'raw', readBack: true });
    expect(part.role).toBe('primary-raw');
    const { context } = recordingPartContext();
    const target = new Recorder<'primary-raw'>();
    const opened = await part.open({
      ...context,
      id: sinkId('raw'),
      cluster: 'c',
      confirm: target,
    });
    expect(opened.sink).toBeInstanceOf(FlightRawSink);
    expect(opened.sink.descriptor.recovery).toEqual({ kind: 'readable' });
    expect(opened.sink.cluster).toBe('c');
    await opened.sink.submit(source, source.span, rawAnchor(source.span));
    await opened.sink.flush();
    const read: SourceBatch[] = [];
    for await (const b of opened.sink.read(source.span)) read.push(b);
    expect(read.flatMap((b) => b.records.map((r) => r.offset))).toEqual([0, 1, 2]);
    await opened.sink.close();
  });

  it('refuses a bad option at declaration, naming it', () => {
    expect(() => flightSink({ url: 'grpc://127.0.0.1:1', dataset: '', readBack: true })).toThrow(
      /flightSink\.dataset/,
    );
    expect(() =>
      flightSink({ url: 'grpc://127.0.0.1:1', dataset: 'd', readBack: true, maxInFlight: 0 }),
    ).toThrow(/flightSink\.maxInFlight/);
  });
});
