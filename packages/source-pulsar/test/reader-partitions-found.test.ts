import { ManualClock, ThalwegError, type SourcePartition } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import {
  decodeMessageId,
  DEFAULT_OFFSET_LAYOUT,
  messageOffset,
  pulsarReaderSource,
} from '../src/index.js';
import { FakePulsarBroker, until } from './support/fake-pulsar-port.js';

// A reader's topic grows while it reads: the partition found is positioned
// by the handler (the pipeline: its stored cursor, a hole check) before a
// reader session opens on it.

const T = 'persistent://t/ns/events';
const P1 = `${T}-partition-1`;
const p1: SourcePartition = { topic: T, partition: 1 };
const POLL_MS = 1_000;
const offsetOf = (id: string) => messageOffset(decodeMessageId(id), DEFAULT_OFFSET_LAYOUT);

async function setup() {
  const broker = new FakePulsarBroker().topic(T, 1);
  broker.publish(`${T}-partition-0`);
  const clock = new ManualClock();
  const log: string[] = [];
  const source = await pulsarReaderSource({
    port: broker.port(),
    cluster: 'test',
    topics: [T],
    scheduler: clock,
    partitionPollMs: POLL_MS,
    lingerMs: 0,
    reconnect: { baseDelayMs: 50, maxDelayMs: 50 },
    log: (line) => log.push(line),
  });
  const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
  await it.next();
  const readersOn = (topic: string) => broker.sessions.filter((s) => s.topic === topic).length;
  return { broker, clock, source, it, log, readersOn };
}

describe('PulsarReaderSource, a partition found while reading', () => {
  it('is positioned by the handler first, then read after the cursor it sought', async () => {
    const s = await setup();
    s.broker.grow(T, 2);
    const ids = [0, 1, 2, 3].map(() => s.broker.publish(P1, {}));
    const asked: SourcePartition[][] = [];
    let release: () => void = () => undefined;
    s.source.onPartitionsFound(async (partitions) => {
      asked.push([...partitions]);
      await new Promise<void>((resolve) => (release = resolve));
      const at = ids[1] ?? '';
      s.source.seek(p1, { kind: 'message-id', messageId: at, nextOffset: offsetOf(at) + 1 });
    });
    await s.clock.elapse(POLL_MS);
    await until(() => asked.length === 1, 'the handler asked');
    expect(asked).toEqual([[p1]]);
    expect(s.source.partitions()).toContainEqual(p1);
    // Nothing of it is read while the handler runs.
    expect(s.readersOn(P1)).toBe(0);
    release();
    const offsets: number[] = [];
    while (offsets.length < 2) {
      const r = await s.it.next();
      if (r.done === true) throw new Error('ended');
      offsets.push(...r.value.records.map((x) => x.offset));
    }
    expect(offsets).toEqual(ids.slice(2).map(offsetOf));
    expect(s.log).toContain(`thalweg source-pulsar: found ${T} partition 1; reading it`);
    await s.source.close();
  });

  it('is read from the configured start when no handler is registered', async () => {
    const s = await setup();
    s.broker.grow(T, 2);
    const id = s.broker.publish(P1, {});
    await s.clock.elapse(POLL_MS);
    const r = await s.it.next();
    if (r.done === true) throw new Error('ended');
    expect(r.value.records.map((x) => x.offset)).toEqual([offsetOf(id)]);
    await s.source.close();
  });

  it('stops the source with the error of a handler that refuses it (a hole in raw)', async () => {
    const s = await setup();
    s.broker.grow(T, 2);
    const hole = new ThalwegError({
      code: 'TWG_PIPELINE_RAW_HOLE',
      errorClass: 'fatal-config',
      message: 'raw lacks [0, 30)',
    });
    s.source.onPartitionsFound(() => Promise.reject(hole));
    const next = s.it.next();
    await s.clock.elapse(POLL_MS);
    await expect(next).rejects.toBe(hole);
    expect(s.readersOn(P1)).toBe(0);
    await s.source.close();
  });

  it('tries a handler that failed otherwise (the offset store away) again after the backoff', async () => {
    const s = await setup();
    s.broker.grow(T, 2);
    const id = s.broker.publish(P1, {});
    let calls = 0;
    s.source.onPartitionsFound(() => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('connection refused')) : Promise.resolve();
    });
    const next = s.it.next();
    await s.clock.elapse(POLL_MS);
    await until(() => calls === 1, 'the first try');
    await until(
      () => s.log.some((l) => l.includes('positioning') && l.includes('connection refused')),
      'the failure logged',
    );
    expect(s.readersOn(P1)).toBe(0);
    await s.clock.elapse(50);
    const r = await next;
    if (r.done === true) throw new Error('ended');
    expect(calls).toBe(2);
    expect(r.value.records.map((x) => x.offset)).toEqual([offsetOf(id)]);
    await s.source.close();
  });
});
