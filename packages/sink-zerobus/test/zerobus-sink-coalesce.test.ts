import { describe, expect, it } from 'vitest';
import { derivedCoverage, offsetSpan, sinkId, type Confirm } from '@thalweg/connector-core';
import { lastOffset, settlementsCoveredBy, type Sent } from '../src/burst-step.js';
import { ZerobusSinkError } from '../src/errors.js';
import {
  FakeTransportFactory,
  FakeZerobusTransport,
  type FakeTransportOptions,
} from '../src/fake-transport.js';
import type { PendingConfirm } from '../src/pending-confirm.js';
import type { StreamSpec, ZerobusTransport } from '../src/transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { batchOf, drive, quiet, recordingTarget, settled, spanAt, until } from './helpers.js';

// Coalescing under the binding's lock (a wait holds the stream: a submit
// issued meanwhile stalls until it returns), modelled by the fake's
// `waitBlocksSubmit`, with manual acknowledgements: deterministic, no sleeps.

const FIELDS = [{ name: 'n', type: 'int32', nullable: false }] as const;
const ID = sinkId('zerobus');
const cover = (i: number): Confirm<'secondary'> => derivedCoverage(ID, spanAt(i));

/** A fake that records the waits it was asked for and the highest one that completed. */
class RecordingTransport extends FakeZerobusTransport {
  readonly waitedOn: number[] = [];
  completedUpTo = -1;
  override async waitForOffset(offset: number): Promise<void> {
    this.waitedOn.push(offset);
    await super.waitForOffset(offset);
    this.completedUpTo = Math.max(this.completedUpTo, offset);
  }
}

class RecordingFactory extends FakeTransportFactory {
  constructor(private readonly stream: Omit<FakeTransportOptions, 'faults'>) {
    super(stream);
  }
  override async open(spec: StreamSpec): Promise<ZerobusTransport> {
    const t = new RecordingTransport(spec, this.stream, this.server);
    this.opened.push(t);
    return t;
  }
  at(i: number): RecordingTransport {
    return this.opened[i] as RecordingTransport;
  }
}

function sinkOver(factory: FakeTransportFactory, streams = 1) {
  const target = recordingTarget<'secondary'>();
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: {
      table: 'main.thalweg.events',
      streams,
      retry: { baseDelayMs: 1 },
      rebuild: { baseDelayMs: 1 },
    },
    fields: FIELDS,
    factory,
    confirm: target,
    log: quiet,
  });
  const applied = () => target.applied.map((a) => a.receipt.span.start / 10);
  return { sink, target, applied };
}

describe('ZerobusSink coalescing under the binding lock', () => {
  it('queues the submits made while a wait holds the stream, then confirms them all with ONE wait on the last offset', async () => {
    const factory = new RecordingFactory({ ackLatencyMs: 'manual', waitBlocksSubmit: true });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await until(() => factory.at(0).waitedOn.length === 1);
    // The wait on offset 0 holds the stream: nine submits return at once,
    // queued on the lane; none is sent into the locked stream.
    const later = Array.from({ length: 9 }, (_, i) =>
      sink.submit(batchOf(1), spanAt(i + 1), cover(i + 1)),
    );
    expect(await settled(Promise.all(later))).toBe(true);
    expect(factory.at(0).accepted).toBe(1);

    factory.at(0).acknowledgeUpTo(0);
    await until(() => factory.at(0).waitedOn.length === 2);
    expect(factory.at(0).accepted).toBe(10);
    expect(factory.at(0).waitedOn).toEqual([0, 9]);
    expect(applied()).toEqual([0]);
    // A delayed, partial acknowledgement covers part of the burst: the wait
    // on 9 has not returned, so nothing more is confirmed.
    factory.at(0).acknowledgeUpTo(4);
    const flushed = sink.flush();
    expect(await settled(flushed)).toBe(false);
    expect(applied()).toEqual([0]);
    factory.at(0).acknowledgeUpTo(9);
    await flushed;
    expect(applied()).toEqual(Array.from({ length: 10 }, (_, i) => i));
    const coalesce = sink.metrics()[0]!.coalesce;
    expect([coalesce.count, coalesce.sum]).toEqual([2, 10]);
    await sink.close();
  });

  it('a wait that fails mid-burst confirms nothing beyond what a completed wait covered; the replacement replays the rest once', async () => {
    const factory = new RecordingFactory({ ackLatencyMs: 'manual', waitBlocksSubmit: true });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await until(() => factory.at(0).waitedOn.length === 1);
    for (let i = 1; i < 10; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    factory.at(0).acknowledgeUpTo(0);
    await until(() => factory.at(0).waitedOn.length === 2);
    // The server acknowledged 1..4, then the stream died while the wait on 9 was outstanding.
    factory.at(0).acknowledgeUpTo(4);
    await factory.at(0).close();
    await until(() => factory.opened.length === 2 && factory.at(1).accepted === 9);
    expect(applied()).toEqual([0]);
    await drive(factory, sink.flush());
    expect(applied()).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(factory.at(1).waitedOn).toEqual([8]);
    await drive(factory, sink.close());
  });

  it('acknowledgements that arrive out of order across the pool confirm each stream in its own order, each batch once', async () => {
    const factory = new RecordingFactory({ ackLatencyMs: 'manual', waitBlocksSubmit: true });
    const { sink, applied } = sinkOver(factory, 2);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    await until(() => factory.opened.length === 2 && factory.opened.every((t) => t.accepted === 1));
    for (let i = 2; i < 8; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    const [s0, s1] = [factory.at(0), factory.at(1)];
    // Stream 1 is acknowledged first, twice over, while stream 0 hears nothing.
    s1.acknowledgeUpTo(0);
    await until(() => s1.waitedOn.length === 2);
    s1.acknowledgeUpTo(Number.MAX_SAFE_INTEGER);
    await until(() => applied().length === 4);
    expect(applied()).toEqual([1, 3, 5, 7]);
    // A stale acknowledgement (lower than one already given) changes nothing.
    s1.acknowledgeUpTo(0);
    s0.acknowledgeUpTo(0);
    await until(() => s0.waitedOn.length === 2);
    expect(applied()).toEqual([1, 3, 5, 7, 0]);
    await drive(factory, sink.flush());
    expect(applied()).toEqual([1, 3, 5, 7, 0, 2, 4, 6]);
    expect([s0.waitedOn, s1.waitedOn]).toEqual([
      [0, 3],
      [0, 3],
    ]);
    await sink.close();
  });

  it('never confirms a batch before a completed wait on its stream covered its offset (audited at every confirmation)', async () => {
    const factory = new RecordingFactory({ ackLatencyMs: 1, waitBlocksSubmit: true });
    let confirmed = 0;
    const uncovered: number[] = [];
    const sink = new ZerobusSink<'secondary'>({
      id: ID,
      config: { table: 'main.thalweg.events', streams: 1, channelCapacity: 16 },
      fields: FIELDS,
      factory,
      confirm: {
        apply: async () => {
          // One stream, no rebuild: the k-th confirmation is offset k.
          if (confirmed > factory.at(0).completedUpTo) uncovered.push(confirmed);
          confirmed++;
        },
      },
      log: quiet,
    });
    for (let i = 0; i < 200; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    await sink.flush();
    expect(confirmed).toBe(200);
    expect(uncovered).toEqual([]);
    // Coalesced: far fewer waits than batches.
    expect(factory.at(0).waitedOn.length).toBeLessThan(50);
    await sink.close();
  });
});

describe('settlementsCoveredBy (the invariant: a wait confirms only what it covered)', () => {
  const entry = (seq: number): PendingConfirm<'secondary'> => ({
    seq,
    position: seq,
    confirm: cover(seq),
    span: offsetSpan('orders', 0, seq * 10, seq * 10 + 10),
    records: 1,
    bytes: 1,
    ipc: new Uint8Array(1),
    submittedAt: 0,
  });
  const entries = [entry(0), entry(1), entry(2)];
  const refusal = { reason: 'poison', error: new Error('refused') } as const;

  it('settles sent batches at or below the wait as durable and refused ones aside, in order', () => {
    const sent: Sent[] = [{ offset: 4 }, { refused: refusal }, { offset: 5 }];
    expect(lastOffset(sent)).toBe(5);
    const settled = settlementsCoveredBy(entries, sent, 5, 7);
    expect(settled.map((s) => s.kind ?? 'durable')).toEqual(['durable', 'set-aside', 'durable']);
    expect(settled.map((s) => s.entry.seq)).toEqual([0, 1, 2]);
    expect(lastOffset([{ refused: refusal }])).toBeNull();
  });

  it('refuses to confirm a batch whose offset is above the wait', () => {
    const sent: Sent[] = [{ offset: 4 }, { offset: 5 }, { offset: 6 }];
    expect(() => settlementsCoveredBy(entries, sent, 5, 7)).toThrow(ZerobusSinkError);
    expect(() => settlementsCoveredBy(entries, sent, 5, 7)).toThrow(
      /offset 6 \(batch 2\) is not covered by the wait on offset 5/,
    );
    expect(() => settlementsCoveredBy(entries, sent.slice(0, 2), 6, 7)).toThrow(/3 batches/);
  });
});
