import { describe, expect, it } from 'vitest';
import { derivedCoverage, sinkId, type Confirm } from '@thalweg/connector-core';
import { FakeCatalog } from '../src/catalog/fake-catalog.js';
import { FakeTransportFactory, FakeZerobusTransport, type Fault } from '../src/fake-transport.js';
import { ZerobusSinkError } from '../src/errors.js';
import type { StreamSpec, ZerobusTransport } from '../src/transport.js';
import { ZerobusSink } from '../src/zerobus-sink.js';
import { batchOf, quiet, recordingTarget, settled, spanAt } from './helpers.js';

// Races and failure paths of the per-stream ack lane, made deterministic with
// manual acknowledgements and injected faults. No test asserts on time.

const FIELDS = [{ name: 'n', type: 'int32', nullable: false }] as const;
const ID = sinkId('zerobus');
const TABLE = 'main.thalweg.events';
const cover = (i: number): Confirm<'secondary'> => derivedCoverage(ID, spanAt(i));

function sinkOver(factory: FakeTransportFactory, config: Record<string, unknown> = {}) {
  const target = recordingTarget<'secondary'>();
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: {
      table: TABLE,
      streams: 1,
      retry: { baseDelayMs: 1 },
      rebuild: { baseDelayMs: 1 },
      ...config,
    },
    fields: FIELDS,
    factory,
    confirm: target,
    log: quiet,
  });
  const applied = () => target.applied.map((a) => a.receipt.span.start / 10);
  return { sink, target, applied };
}

/** Acknowledges everything on every stream opened so far, until `p` settles. */
async function drive<T>(factory: FakeTransportFactory, p: Promise<T>): Promise<T> {
  const state = { done: false };
  p.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  for (let i = 0; i < 2000 && !state.done; i++) {
    for (const t of factory.opened) t.acknowledgeUpTo(Number.MAX_SAFE_INTEGER);
    await new Promise((r) => setTimeout(r, 1));
  }
  return p;
}

/** Waits (by turns of the event loop, bounded) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(cond()).toBe(true);
}

const poisonOnWait = (nth: number) => (i: number) =>
  i === 0 ? [{ op: 'wait', nth, failure: 'poison-stream' } as const] : [];

describe('ZerobusStream recovery is single-flight and ordered', () => {
  it('two flushes racing after a poison open ONE replacement, replay once, leak nothing', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual', faults: poisonOnWait(2) });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    // Submit returns once queued; batch 0 goes alone into the lane's first
    // burst (sent, then waited on), and what follows queues behind that wait.
    await until(() => factory.opened[0]!.accepted === 1);
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    await sink.submit(batchOf(1), spanAt(2), cover(2));
    // Batch 0 is confirmed; the lane then dies on its second wait, owing 1 and 2.
    factory.opened[0]!.acknowledgeUpTo(0);
    await until(() => factory.opened[0]!.isDead);

    const f1 = sink.flush();
    const f2 = sink.flush();
    await drive(factory, Promise.all([f1, f2]));
    expect(factory.opened).toHaveLength(2);
    expect(sink.metrics()[0]!.rebuilds.value).toBe(1);
    expect(applied()).toEqual([0, 1, 2]);
    await drive(factory, sink.close());
    expect(factory.opened.every((t) => t.isDead)).toBe(true);
  });

  it('a submit arriving during the replay lands after the replayed batches', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual', faults: poisonOnWait(2) });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    // Submit returns once queued; batch 0 goes alone into the lane's first
    // burst (sent, then waited on), and what follows queues behind that wait.
    await until(() => factory.opened[0]!.accepted === 1);
    for (let i = 1; i < 3; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    factory.opened[0]!.acknowledgeUpTo(0);
    await until(() => factory.opened[0]!.isDead);

    const flushed = sink.flush();
    const late = sink.submit(batchOf(1), spanAt(3), cover(3));
    await drive(factory, Promise.all([flushed, late]));
    await drive(factory, sink.flush());
    expect(factory.opened).toHaveLength(2);
    expect(applied()).toEqual([0, 1, 2, 3]);
    await drive(factory, sink.close());
    expect(factory.opened.every((t) => t.isDead)).toBe(true);
  });

  it('close does not return while another caller is still replaying', async () => {
    // The replacement accepts nothing until released: the replay is under way.
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    class GatedTransport extends FakeZerobusTransport {
      override async submit(ipc: Uint8Array): Promise<number> {
        await gate;
        return super.submit(ipc);
      }
    }
    class GatedFactory extends FakeTransportFactory {
      override async open(spec: StreamSpec): Promise<ZerobusTransport> {
        if (this.opened.length === 0) return super.open(spec);
        const t = new GatedTransport(spec, { ackLatencyMs: 'manual' }, this.server);
        this.opened.push(t);
        return t;
      }
    }
    const factory = new GatedFactory({ ackLatencyMs: 'manual', faults: poisonOnWait(2) });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    // Submit returns once queued; batch 0 goes alone into the lane's first
    // burst (sent, then waited on), and what follows queues behind that wait.
    await until(() => factory.opened[0]!.accepted === 1);
    for (let i = 1; i < 3; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
    factory.opened[0]!.acknowledgeUpTo(0);
    await until(() => factory.opened[0]!.isDead);

    const flushed = sink.flush(); // opens the replacement and starts replaying 1, 2
    await until(() => factory.opened.length === 2);
    const closing = sink.close();
    expect(await settled(closing)).toBe(false);

    release();
    await drive(factory, Promise.all([flushed, closing]));
    expect(applied()).toEqual([0, 1, 2]);
    expect(factory.opened).toHaveLength(2);
    expect(factory.opened.every((t) => t.isDead)).toBe(true);
  });
});

describe('ZerobusStream failure classes', () => {
  it.each<[string, Fault['failure'], number]>([
    ['a transient failure that outlasts its retries', 'transient', 1],
    ['a poison-batch refusal', 'poison-batch', 5],
  ])(
    '%s during a replay strands nothing: the replay moves on to a fresh stream',
    async (_, failure, retries) => {
      // Stream 0 dies owing batches 1 and 2; its replacement refuses the second replayed batch once.
      const factory = new FakeTransportFactory({
        ackLatencyMs: 'manual',
        faults: (i): Fault[] =>
          i === 0
            ? [{ op: 'wait', nth: 2, failure: 'poison-stream' }]
            : i === 1
              ? [{ op: 'submit', nth: 2, failure }]
              : [],
      });
      const { sink, applied } = sinkOver(factory, {
        retry: { baseDelayMs: 1, maxAttempts: retries },
      });
      await sink.submit(batchOf(1), spanAt(0), cover(0));
      // Batch 0 goes alone into the first burst; 1 and 2 queue behind its wait.
      await until(() => factory.opened[0]!.accepted === 1);
      for (let i = 1; i < 3; i++) await sink.submit(batchOf(1), spanAt(i), cover(i));
      factory.opened[0]!.acknowledgeUpTo(0);
      await until(() => factory.opened[0]!.isDead);
      await drive(factory, sink.flush());
      expect(applied()).toEqual([0, 1, 2]);
      await drive(factory, sink.close());
    },
  );

  it('a fatal-config failure on the ack lane fails loud and stays failed (no rebuild)', async () => {
    const factory = new FakeTransportFactory({
      ackLatencyMs: 'manual',
      faults: () => [{ op: 'wait', nth: 1, failure: 'fatal-config' }],
    });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await expect(drive(factory, sink.flush())).rejects.toMatchObject({
      code: 'TWG_ZEROBUS_FATAL_CONFIG',
    });
    await expect(sink.submit(batchOf(1), spanAt(1), cover(1))).rejects.toMatchObject({
      code: 'TWG_ZEROBUS_FATAL_CONFIG',
    });
    expect(factory.opened).toHaveLength(1);
    expect(applied()).toEqual([]);
    await sink.close().catch(() => undefined);
  });

  it('a submit waiting for room when the lane dies (any class) is accepted and replayed, not rejected', async () => {
    // The lane's wait for batch 0 fails transiently twice (retries exhausted)
    // while batch 1 fills the channel and batch 2 waits for room.
    const factory = new FakeTransportFactory({
      ackLatencyMs: 1,
      faults: (i): Fault[] =>
        i === 0
          ? [
              { op: 'wait', nth: 1, failure: 'transient' },
              { op: 'wait', nth: 2, failure: 'transient' },
            ]
          : [],
    });
    const { sink, applied } = sinkOver(factory, {
      channelCapacity: 1,
      retry: { baseDelayMs: 1, maxAttempts: 2 },
    });
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    await expect(sink.submit(batchOf(1), spanAt(2), cover(2))).resolves.toBeUndefined();
    await sink.flush();
    expect(applied()).toEqual([0, 1, 2]);
    await sink.close();
  });

  it('a failed open during a rebuild costs one attempt of the budget, not two', async () => {
    class FlakyOpen extends FakeTransportFactory {
      calls = 0;
      override async open(spec: StreamSpec): Promise<ZerobusTransport> {
        this.calls += 1;
        if (this.calls === 2) throw new ZerobusSinkError('transient', 'connection refused');
        return super.open(spec);
      }
    }
    const factory = new FlakyOpen({ ackLatencyMs: 'manual', faults: poisonOnWait(1) });
    const { sink, applied } = sinkOver(factory, { rebuild: { baseDelayMs: 1, maxAttempts: 2 } });
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    await until(() => factory.opened[0]!.isDead);
    // Attempt 1 fails to open, attempt 2 opens and replays: within a budget of 2.
    await drive(factory, sink.flush());
    expect(factory.calls).toBe(3);
    expect(applied()).toEqual([0]);
    await drive(factory, sink.close());
  });
});

describe('ZerobusSink flush and close contracts', () => {
  it('flush waits for the batches submitted before it, not for later ones', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    // Submit returns once queued; batch 0 goes alone into the lane's first
    // burst (sent, then waited on), and what follows queues behind that wait.
    await until(() => factory.opened[0]!.accepted === 1);
    const flushed = sink.flush();
    await sink.submit(batchOf(1), spanAt(1), cover(1));
    factory.opened[0]!.acknowledgeUpTo(0);
    expect(await settled(flushed)).toBe(true);
    expect(applied()).toEqual([0]);
    await drive(factory, sink.close());
    expect(applied()).toEqual([0, 1]);
  });

  it('a second close waits for the first and reports its failure', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    const { sink, applied } = sinkOver(factory);
    await sink.submit(batchOf(1), spanAt(0), cover(0));
    const first = sink.close();
    const second = sink.close();
    expect(await settled(second)).toBe(false);
    factory.opened[0]!.acknowledgeUpTo(0);
    await Promise.all([first, second]);
    expect(applied()).toEqual([0]);

    const failing = new FakeTransportFactory({
      ackLatencyMs: 'manual',
      faults: () => [{ op: 'wait', nth: 1, failure: 'fatal-config' }],
    });
    const other = sinkOver(failing).sink;
    await other.submit(batchOf(1), spanAt(0), cover(0));
    await expect(other.close()).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
    await expect(other.close()).rejects.toMatchObject({ code: 'TWG_ZEROBUS_FATAL_CONFIG' });
  });

  it('a submit racing close (while the catalog is read) is refused and opens nothing', async () => {
    const catalog = new FakeCatalog();
    await catalog.ensureTable(TABLE, [{ name: 'n', type: 'int32', nullable: false }], {});
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const gated = {
      ensureTable: catalog.ensureTable.bind(catalog),
      describe: async (name: string) => {
        await gate;
        return catalog.describe(name);
      },
    };
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    const sink = new ZerobusSink<'secondary'>({
      id: ID,
      config: { table: TABLE, streams: 1 },
      catalog: gated,
      factory,
      confirm: recordingTarget(),
      log: quiet,
    });
    // Observed at once: the submit may be refused while close() is still running.
    const refused = expect(sink.submit(batchOf(1), spanAt(0), cover(0))).rejects.toMatchObject({
      code: 'TWG_ZEROBUS_FATAL_CONFIG',
    });
    await sink.close();
    release();
    await refused;
    expect(factory.opened).toHaveLength(0);
  });
});
