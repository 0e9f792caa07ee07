import { describe, expect, it } from 'vitest';
import { ManualClock, type SourceBatch } from '@thalweg/connector-core';
import {
  decodeMessageId,
  DEFAULT_OFFSET_LAYOUT,
  messageOffset,
  pulsarSubscriptionSource,
  type PulsarSubscriptionOptions,
} from '../src/index.js';
import { FakePulsarBroker, until } from './support/fake-pulsar-port.js';

const T = 'persistent://t/ns/orders';
const P0 = `${T}-partition-0`;
const p0 = { topic: T, partition: 0 };
const offsetOf = (id: string) => messageOffset(decodeMessageId(id), DEFAULT_OFFSET_LAYOUT);

function setup(options: Partial<PulsarSubscriptionOptions> = {}, partitions = 1, backlog = 6) {
  const broker = new FakePulsarBroker().topic(T, partitions);
  for (let i = 0; i < backlog; i++) broker.publish(P0);
  const clock = new ManualClock();
  const port = broker.port();
  const log: string[] = [];
  const source = pulsarSubscriptionSource({
    port,
    cluster: 'test',
    topics: [T],
    subscription: 'sub',
    type: 'Shared',
    scheduler: clock,
    // The manual clock would hold a linger until elapsed: batches take what one read brought.
    lingerMs: 0,
    maxQueuedBatches: 4,
    maxBatchMessages: 2,
    partitionPollMs: 1_000,
    log: () => undefined,
    ...options,
  });
  source.onAssignment((e) => {
    const acks = broker.sessions.reduce((n, s) => n + s.acks.length, 0);
    log.push(`${e.kind} ${e.partitions.map((p) => p.partition).join(',')} acks=${String(acks)}`);
  });
  const controller = new AbortController();
  const iterator = source.batches(controller.signal)[Symbol.asyncIterator]();
  const batches: SourceBatch[] = [];
  const next = async (): Promise<SourceBatch> => {
    const r = await iterator.next();
    if (r.done === true) throw new Error('the source ended');
    batches.push(r.value);
    log.push(`batch ${r.value.records.map((x) => x.offset).join(',')}`);
    return r.value;
  };
  const records = () => batches.flatMap((b) => b.records);
  return { broker, clock, port, source, log, next, batches, records, controller, iterator };
}

describe('PulsarSubscriptionSource', () => {
  it('acknowledges nothing before a commit', async () => {
    const s = setup();
    while (s.records().length < 6) await s.next();
    expect(s.broker.live(P0).acks).toEqual([]);
    expect(s.broker.ackedOn(P0, 'sub').size).toBe(0);
    await s.source.close();
  });

  it('a commit acknowledges, one by one on the delivering session, exactly what was yielded below next', async () => {
    const s = setup();
    while (s.records().length < 4) await s.next();
    const ids = s.broker.ids(P0);
    const session = s.broker.live(P0);
    const third = offsetOf(ids[2] ?? '');
    await s.source.commit(p0, third + 1);
    expect(session.acks).toEqual(ids.slice(0, 3));
    await s.source.commit(p0, third + 1);
    expect(session.acks).toEqual(ids.slice(0, 3));
    // Far ahead: only what was yielded is acknowledged, never what was not delivered.
    await s.source.commit(p0, Number.MAX_SAFE_INTEGER);
    const yielded = s.records().map((r) => r.offset);
    expect(session.acks.map(offsetOf)).toEqual(yielded);
    expect(s.source.stats().acksSent).toBe(yielded.length);
    await s.source.close();
    expect(s.port.closed).toBe(true);
  });

  it('a commit for a partition revoked (its session closed) acknowledges nothing and is counted', async () => {
    const s = setup();
    while (s.records().length < 2) await s.next();
    const old = s.broker.live(P0);
    old.kill();
    expect(s.log).toContain('revoked 0 acks=0');
    await s.source.commit(p0, Number.MAX_SAFE_INTEGER);
    expect(old.acks).toEqual([]);
    expect(s.source.stats().droppedCommits['not-owned']).toBe(1);
    await expect(s.source.commit(p0, -1)).rejects.toMatchObject({ code: 'TWG_SPAN_INVALID' });
    await s.source.close();
  });

  it('keeps permits within the prefetch bound, and grants none while paused', async () => {
    const s = setup({ maxQueuedBatches: 2, maxBatchMessages: 2 }, 1, 30);
    const bound = 4;
    const granted = () => s.broker.live(P0).permits.reduce((a, b) => a + b, 0);
    // The sessions open when the iteration starts.
    const first = s.next();
    await until(() => s.broker.sessions.length === 1 && granted() > 0, 'first permits');
    expect(s.broker.live(P0).permits[0]).toBe(bound);
    await first;
    expect(granted() - s.records().length).toBeLessThanOrEqual(bound);
    for (let i = 0; i < 5; i++) {
      await s.next();
      expect(granted() - s.records().length).toBeLessThanOrEqual(bound);
    }
    s.source.pause([p0]);
    const before = granted();
    await until(() => s.broker.live(P0).credit === 0, 'the granted messages delivered');
    expect(granted()).toBe(before);
    // A session opened while paused is granted nothing either.
    s.broker.live(P0).kill();
    await s.clock.elapse(10_000);
    await until(() => s.source.stats().sessionsOpen === 1, 'a new session');
    expect(s.broker.live(P0).permits).toEqual([]);
    s.source.resume([p0]);
    await s.next();
    expect(granted()).toBeGreaterThan(0);
    expect(granted() - s.records().length).toBeLessThanOrEqual(bound);
    await s.source.close();
  });

  it('a redelivery below what was yielded waits for the commit, then revokes, assigns, and yields it', async () => {
    const s = setup({ maxBatchMessages: 10 });
    while (s.records().length < 6) await s.next();
    const ids = s.broker.ids(P0);
    const session = s.broker.live(P0);
    // Another consumer of the Shared subscription gave it back (or a nack timed out).
    session.nack(ids[1] ?? '');
    await until(() => session.delivered.length === 7, 'the redelivery');
    const pending = s.next();
    let settled = false;
    void pending.then(() => (settled = true));
    await until(() => true, 'a turn');
    expect(settled).toBe(false);
    await s.source.commit(p0, s.batches.at(-1)?.span.end ?? 0);
    const batch = await pending;
    expect(batch.records.map((r) => r.offset)).toEqual([offsetOf(ids[1] ?? '')]);
    expect(s.log.slice(-3)).toEqual([
      'revoked 0 acks=6',
      'assigned 0 acks=6',
      `batch ${String(offsetOf(ids[1] ?? ''))}`,
    ]);
    expect(s.source.stats().epochResets).toBe(1);
    await s.source.close();
  });

  it('a session closed mid-stream: revoked, reopened after the backoff, assigned, the rest again at the same offsets', async () => {
    const s = setup({ reconnect: { baseDelayMs: 50, maxDelayMs: 100 } });
    while (s.records().length < 4) await s.next();
    const ids = s.broker.ids(P0);
    await s.source.commit(p0, offsetOf(ids[1] ?? '') + 1);
    s.broker.live(P0).kill(1006, 'gone');
    expect(s.log.at(-1)).toBe('revoked 0 acks=2');
    expect(s.source.stats().sessionsOpen).toBe(0);
    await s.clock.elapse(100);
    await until(() => s.source.stats().sessionsOpen === 1, 'a new session');
    expect(s.log.at(-1)).toBe('assigned 0 acks=2');
    const again: number[] = [];
    while (again.length < 4) again.push(...(await s.next()).records.map((r) => r.offset));
    expect(again).toEqual(ids.slice(2).map(offsetOf));
    expect(s.source.stats().reconnects).toBe(1);
    await s.source.close();
  });

  it('maps a message to a record: key bytes, properties then times as headers, event time first', async () => {
    const broker = new FakePulsarBroker().topic(T, 0);
    const payload = new Uint8Array([0, 1, 255]);
    broker.publish(T, {
      payload,
      key: 'kä',
      properties: [
        ['b', 'x'],
        ['a', ''],
      ],
      publishTime: 1_700_000_000_123,
      eventTime: 1_600_000_000_001,
    });
    broker.publish(T, { publishTime: 5 });
    const source = pulsarSubscriptionSource({
      port: broker.port(),
      cluster: 'c',
      topics: [T],
      subscription: 's',
      log: () => undefined,
    });
    const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    const records = [];
    while (records.length < 2) {
      const r = await it.next();
      if (r.done === true) break;
      records.push(...r.value.records);
      expect(r.value.span.topic).toBe(T);
      expect(r.value.span.partition).toBe(0);
    }
    const [a, b] = records;
    const text = (v: Uint8Array | null) => (v === null ? null : Buffer.from(v).toString('utf8'));
    expect(a?.key).toEqual(new TextEncoder().encode('kä'));
    expect(a?.value).toEqual(payload);
    expect(a?.headers.map(([n, v]) => [n, text(v)])).toEqual([
      ['b', 'x'],
      ['a', ''],
      ['pulsar.event_time', '1600000000001'],
      ['pulsar.publish_time', '1700000000123'],
    ]);
    expect(a?.timestamp).toBe(1_600_000_000_001);
    expect(a?.tombstone).toBeUndefined();
    expect(b?.key).toBeNull();
    expect(b?.headers.map(([n, v]) => [n, text(v)])).toEqual([['pulsar.publish_time', '5']]);
    expect(b?.timestamp).toBe(5);
    await source.close();
  });

  it('an id the offset layout cannot hold ends the source, naming the topic and partition', async () => {
    const broker = new FakePulsarBroker().topic(T, 2);
    broker.publish(`${T}-partition-1`, { ledger: 2 ** 30 });
    const source = pulsarSubscriptionSource({
      port: broker.port(),
      cluster: 'c',
      topics: [T],
      subscription: 's',
      log: () => undefined,
    });
    const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({
      code: 'TWG_PULSAR_ID_OUT_OF_RANGE',
      message: expect.stringContaining(`${T} partition 1`) as unknown,
    });
    await source.close();
  });

  it('picks up partitions added while running, at the next poll', async () => {
    const s = setup({}, 2, 0);
    const pending = s.next();
    await until(() => s.source.stats().sessionsOpen === 2, 'two sessions');
    s.broker.grow(T, 3);
    s.broker.publish(`${T}-partition-2`);
    await s.clock.elapse(1_000);
    const batch = await pending;
    expect(batch.span.partition).toBe(2);
    expect(s.log.filter((l) => l.startsWith('assigned'))).toEqual([
      'assigned 0 acks=0',
      'assigned 1 acks=0',
      'assigned 2 acks=0',
    ]);
    await s.source.close();
  });

  it('refuses options naming the field', () => {
    const broker = new FakePulsarBroker();
    expect(() =>
      pulsarSubscriptionSource({
        port: broker.port(),
        cluster: 'c',
        topics: ['orders'],
        subscription: 's',
      }),
    ).toThrow(/pulsarSource\.topics\[0\]/);
  });
});
