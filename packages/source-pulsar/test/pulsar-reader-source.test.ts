import { describe, expect, it } from 'vitest';
import { ManualClock, type SourceBatch } from '@thalweg/connector-core';
import {
  decodeMessageId,
  DEFAULT_OFFSET_LAYOUT,
  messageOffset,
  pulsarReaderSource,
  type PulsarReaderOptions,
} from '../src/index.js';
import { FakePulsarBroker, until } from './support/fake-pulsar-port.js';

const T = 'persistent://t/ns/events';
const P0 = `${T}-partition-0`;
const p0 = { topic: T, partition: 0 };
const offsetOf = (id: string) => messageOffset(decodeMessageId(id), DEFAULT_OFFSET_LAYOUT);

async function setup(options: Partial<PulsarReaderOptions> = {}, backlog = 8) {
  const broker = new FakePulsarBroker().topic(T, 1);
  for (let i = 0; i < backlog; i++) broker.publish(P0);
  const clock = new ManualClock();
  const source = await pulsarReaderSource({
    port: broker.port(),
    cluster: 'test',
    topics: [T],
    scheduler: clock,
    // The manual clock would hold a linger until elapsed: batches take what one read brought.
    lingerMs: 0,
    maxQueuedBatches: 2,
    maxBatchMessages: 2,
    log: () => undefined,
    ...options,
  });
  const batches: SourceBatch[] = [];
  let iterator: AsyncIterator<SourceBatch> | undefined;
  const next = async (): Promise<SourceBatch> => {
    iterator ??= source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    const r = await iterator.next();
    if (r.done === true) throw new Error('the source ended');
    batches.push(r.value);
    return r.value;
  };
  const offsets = () => batches.flatMap((b) => b.records.map((r) => r.offset));
  return { broker, clock, source, next, batches, offsets, ids: broker.ids(P0) };
}

describe('PulsarReaderSource', () => {
  it('lists its partitions when it opens', async () => {
    const s = await setup();
    expect(s.source.partitions()).toEqual([p0]);
    await s.source.close();
  });

  it('refuses a cursor of another kind, or with an id that is not one', async () => {
    const s = await setup();
    expect(() => s.source.seek(p0, { kind: 'log-offset', nextOffset: 1 })).toThrow(
      expect.objectContaining({ code: 'TWG_PULSAR_CURSOR_INVALID' }),
    );
    expect(() =>
      s.source.seek(p0, { kind: 'message-id', messageId: '-not-base64-', nextOffset: 1 }),
    ).toThrow(expect.objectContaining({ code: 'TWG_PULSAR_CURSOR_INVALID' }));
    await s.source.close();
  });

  it('resumes exactly after the id in its cursor', async () => {
    const s = await setup();
    const at = s.ids[2] ?? '';
    s.source.seek(p0, { kind: 'message-id', messageId: at, nextOffset: offsetOf(at) + 1 });
    while (s.offsets().length < 5) await s.next();
    expect(s.offsets()).toEqual(s.ids.slice(3).map(offsetOf));
    expect(s.broker.live(P0).delivered[0]).toBe(s.ids[3]);
    await s.source.close();
  });

  it('cursorAt is the id of the last message yielded below next', async () => {
    const s = await setup();
    while (s.offsets().length < 4) await s.next();
    const third = offsetOf(s.ids[2] ?? '');
    expect(s.source.cursorAt(p0, third + 1)).toEqual({
      kind: 'message-id',
      messageId: s.ids[1],
      nextOffset: offsetOf(s.ids[1] ?? '') + 1,
    });
    const end = s.batches[1]?.span.end ?? 0;
    expect(s.source.cursorAt(p0, end)).toEqual({
      kind: 'message-id',
      messageId: s.ids[3],
      nextOffset: end,
    });
    // An earlier position than a cursor already taken: the marks before it are gone, so it refuses.
    expect(() => s.source.cursorAt(p0, offsetOf(s.ids[0] ?? ''))).toThrow(
      expect.objectContaining({ code: 'TWG_PULSAR_MISUSE' }),
    );
    // seek belongs before batches().
    const cursor = s.source.cursorAt(p0, end);
    expect(() => s.source.seek(p0, cursor)).toThrow(
      expect.objectContaining({ code: 'TWG_PULSAR_MISUSE' }),
    );
    await s.source.close();
  });

  it('hands flow tokens back only for what it yielded, and not while paused', async () => {
    const s = await setup({}, 12);
    await s.next();
    const reader = s.broker.live(P0);
    await until(() => reader.delivered.length === 4, 'the receiver queue filled');
    // The share is 4: four delivered, two yielded, two tokens back.
    expect(reader.releases).toEqual(s.ids.slice(0, 2));
    s.source.pause([p0]);
    await until(() => reader.delivered.length === 6, 'the two freed slots used');
    expect(reader.releases).toEqual(s.ids.slice(0, 2));
    s.source.resume([p0]);
    while (s.offsets().length < 6) await s.next();
    expect(reader.releases).toEqual(s.ids.slice(0, 6));
    expect(reader.delivered.length - reader.releases.length).toBeLessThanOrEqual(4);
    await s.source.close();
  });

  it('a closed reader opens again after the backoff, after the last message yielded', async () => {
    const s = await setup({ reconnect: { baseDelayMs: 10, maxDelayMs: 10 } });
    await s.next();
    const old = s.broker.live(P0);
    await until(() => old.delivered.length === 4, 'the receiver queue filled');
    old.kill(1005, 'broker stopped');
    await s.clock.elapse(10);
    await until(() => s.source.stats().sessionsOpen === 1, 'a new reader');
    while (s.offsets().length < 8) await s.next();
    expect(s.offsets()).toEqual(s.ids.map(offsetOf));
    expect(s.broker.live(P0).delivered[0]).toBe(s.ids[2]);
    expect(s.source.stats().reconnects).toBe(1);
    await s.source.close();
  });

  it('an id the offset layout cannot hold ends the source, naming the topic and partition', async () => {
    const broker = new FakePulsarBroker().topic(T, 0);
    broker.publish(T, { entry: 2 ** 17 });
    const source = await pulsarReaderSource({
      port: broker.port(),
      cluster: 'c',
      topics: [T],
      log: () => undefined,
    });
    const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({
      code: 'TWG_PULSAR_ID_OUT_OF_RANGE',
      message: expect.stringContaining(`${T} partition 0`) as unknown,
    });
    await source.close();
  });
});
