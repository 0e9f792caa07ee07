import { offsetSpan, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../src/coverage-recorder.js';
import { resolveLaneSettings } from '../src/pipeline-config.js';
import { SecondaryLane } from '../src/secondary-lane.js';
import type { Derive, Derived, QuarantineNote } from '../src/topology.js';
import { jsonRows, MemorySecondary, type MemoryRow } from './doubles/memory-sinks.js';
import { makeRecords } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

// One secondary lane alone, over a sink whose acknowledgements the test gives.

const SEC = sinkId('sec0');
const P = { topic: 't', partition: 0 };
const records = makeRecords('t', 0, 100);
const batch = (start: number, end: number): SourceBatch => ({
  span: offsetSpan('t', 0, start, end),
  records: records.slice(start, end),
});

function setup(
  config: { maxQueuedBatches?: number; maxQueuedBytes?: number } = {},
  derive: Derive<MemoryRow[]> = jsonRows,
) {
  const coverage = new InMemoryCoverage({ sinks: [SEC] });
  const logs: string[] = [];
  const recorder = new CoverageRecorder(coverage, (l) => logs.push(l));
  const quarantined: { sink: string; note: QuarantineNote }[] = [];
  const lane = new SecondaryLane(
    'secondaries[0]',
    derive,
    recorder,
    (sink, _b, note) => quarantined.push({ sink, note }),
    (l) => logs.push(l),
  );
  const sink = new MemorySecondary(lane.target, 'sec0');
  sink.mode = 'manual';
  lane.start(sink, resolveLaneSettings(config));
  const covered = async () => {
    await recorder.drain();
    return (await coverage.covered({ sink: SEC, ...P })).ranges();
  };
  return { lane, sink, recorder, quarantined, logs, covered };
}

describe('SecondaryLane', () => {
  it('submits what it is offered in order, and records coverage only after the durable ack', async () => {
    const s = setup();
    expect(s.lane.id).toBe('sec0');
    s.lane.offer(batch(0, 10));
    s.lane.offer(batch(10, 20));
    await until(() => s.sink.submitted === 2);
    expect(await s.covered()).toEqual([]);
    expect(s.recorder.stats().buffered).toBe(0);
    await s.sink.ack(1);
    expect(await s.covered()).toEqual([{ start: 0, end: 10 }]);
    await s.sink.ack(1);
    expect(await s.covered()).toEqual([{ start: 0, end: 20 }]);
    expect(s.lane.stats()).toMatchObject({
      submittedBatches: 2,
      deliveredRecords: 20,
      shedBatches: 0,
    });
  });

  it('sheds, never waits, when its queue is full: offer returns at once and the span stays a gap', async () => {
    const s = setup({ maxQueuedBatches: 2 });
    s.sink.stallSubmit = new Promise<void>(() => undefined);
    for (let at = 0; at < 50; at += 10) s.lane.offer(batch(at, at + 10));
    // One taken into the stalled submit, two queued, the rest shed.
    await until(() => s.sink.waitingSubmits === 1);
    s.lane.offer(batch(50, 60));
    expect(s.lane.stats()).toMatchObject({ queuedBatches: 2, shedBatches: 3, shedRecords: 30 });
    expect(s.lane.fill()).toBe(1);
  });

  it('derives up to three batches ahead of the one it delivers, still counted by its bounds, and submits in order', async () => {
    const started: number[] = [];
    const answers = new Map<number, (derived: Derived<MemoryRow[]>) => void>();
    // A derivation that answers when the test says, as a worker thread's does later.
    const later: Derive<MemoryRow[]> = (b) => {
      started.push(b.span.start);
      return new Promise((resolve) => answers.set(b.span.start, resolve));
    };
    const s = setup({ maxQueuedBatches: 4 }, later);
    s.sink.stallSubmit = new Promise<void>(() => undefined);
    for (let at = 0; at < 50; at += 10) s.lane.offer(batch(at, at + 10));
    await until(() => started.length === 4);
    expect(started).toEqual([0, 10, 20, 30]);
    // 0 is being delivered; 10, 20 and 30, deriving ahead, count against the
    // bound of four: the fifth offer was shed, a sixth fits and a seventh not.
    expect(s.lane.stats()).toMatchObject({ queuedBatches: 3, shedBatches: 1 });
    s.lane.offer(batch(50, 60));
    s.lane.offer(batch(60, 70));
    expect(s.lane.stats()).toMatchObject({ queuedBatches: 4, shedBatches: 2 });
    // The second batch answers first; the first is submitted first all the same.
    answers.get(10)?.(jsonRows(batch(10, 20)));
    await Promise.resolve();
    expect(s.sink.admitting).toEqual([]);
    answers.get(0)?.(jsonRows(batch(0, 10)));
    await until(() => s.sink.waitingSubmits === 1);
    expect(s.sink.admitting.map((sp) => sp.start)).toEqual([0]);
    expect(started).toEqual([0, 10, 20, 30]);
  });

  it('failed, sheds what was deriving ahead with what was queued, each a counted gap', async () => {
    const s = setup({ maxQueuedBatches: 8 });
    s.sink.failSubmits = true;
    for (let at = 0; at < 50; at += 10) s.lane.offer(batch(at, at + 10));
    await until(() => s.lane.current.kind === 'failed');
    // 0 failed the sink; 10, 20 and 30 were derived ahead, 40 was queued.
    expect(s.lane.stats()).toMatchObject({ shedBatches: 5, shedRecords: 50, queuedBatches: 0 });
  });

  it('stopped past its deadline, counts what was deriving ahead as shed with what was queued', async () => {
    const started: number[] = [];
    const never: Derive<MemoryRow[]> = (b) => {
      started.push(b.span.start);
      return new Promise(() => undefined);
    };
    const s = setup({ maxQueuedBatches: 8 }, never);
    for (let at = 0; at < 50; at += 10) s.lane.offer(batch(at, at + 10));
    await until(() => started.length === 4);
    await s.lane.stop(0);
    // 0 was being delivered when the deadline passed; 10, 20 and 30 were
    // deriving ahead and 40 queued: four gaps for recovery, each counted.
    expect(s.lane.stats()).toMatchObject({ shedBatches: 4, shedRecords: 40, queuedBatches: 0 });
  });

  it('pendingFloor is the lowest span it may still deliver itself, and moves as spans settle', async () => {
    const s = setup();
    expect(s.lane.pendingFloor(P)).toBeNull();
    s.lane.offer(batch(0, 10));
    s.lane.offer(batch(10, 20));
    s.lane.offer(batch(20, 30));
    expect(s.lane.pendingFloor(P)).toBe(0);
    await until(() => s.sink.submitted === 3);
    // The sink settles [0,10) and [10,20) without confirming them (onPoison: 'skip'),
    // then confirms [20,30): everything submitted before it is settled too.
    s.sink.skipConfirm = (span) => span.end <= 20;
    await s.sink.ack();
    expect(s.lane.pendingFloor(P)).toBeNull();
    expect(await s.covered()).toEqual([{ start: 20, end: 30 }]);
  });

  it('a failing sink fails the lane alone: later offers are shed and it claims nothing more', async () => {
    const s = setup();
    s.sink.failSubmits = true;
    s.lane.offer(batch(0, 10));
    await until(() => s.lane.current.kind === 'failed');
    s.lane.offer(batch(10, 20));
    expect(s.lane.stats()).toMatchObject({ state: 'failed', shedBatches: 2, submittedBatches: 0 });
    expect(s.lane.pendingFloor(P)).toBeNull();
    expect(s.logs.some((l) => l.includes('failed at t/0[0,10)'))).toBe(true);
  });

  it('a derivation that refuses every record quarantines them and holds the span vacuously', async () => {
    const s = setup();
    const garbage: SourceBatch = {
      span: offsetSpan('t', 0, 0, 2),
      records: makeRecords('t', 0, 2, () => 'not json'),
    };
    s.lane.offer(garbage);
    await until(() => s.lane.stats().quarantined === 2);
    expect(s.quarantined.map((q) => [q.sink, q.note.offset, q.note.reason])).toEqual([
      ['sec0', 0, 'decode'],
      ['sec0', 1, 'decode'],
    ]);
    expect(s.sink.submitted).toBe(0);
    expect(await s.covered()).toEqual([{ start: 0, end: 2 }]);
  });

  it('a batch the sink sets aside after its retries ran out is quarantined retry-exhausted and stays a gap; the lane goes on', async () => {
    const s = setup();
    s.sink.mode = 'auto';
    s.sink.setAsideWith = (span) =>
      span.start === 10 ? { reason: 'retry-exhausted', error: new Error('server gone') } : null;
    for (let at = 0; at < 40; at += 10) s.lane.offer(batch(at, at + 10));
    await until(() => s.lane.stats().deliveredBatches === 3);
    expect(s.lane.current.kind).toBe('running');
    expect(s.quarantined.map((q) => q.note.offset)).toEqual(
      Array.from({ length: 10 }, (_, i) => 10 + i),
    );
    expect(
      s.quarantined.every((q) => q.sink === 'sec0' && q.note.reason === 'retry-exhausted'),
    ).toBe(true);
    expect(s.quarantined[0]?.note.detail).toContain('server gone');
    // Recovery replays the gap once the sink is healthy again.
    expect(await s.covered()).toEqual([
      { start: 0, end: 10 },
      { start: 20, end: 40 },
    ]);
    expect(s.lane.stats()).toMatchObject({ setAsideBatches: 1, quarantined: 10, shedBatches: 0 });
    expect(s.lane.pendingFloor(P)).toBeNull();
  });

  it('a poison batch the sink sets aside is quarantined contract and held vacuously: a replay would be refused again', async () => {
    const s = setup();
    s.sink.mode = 'auto';
    s.sink.setAsideWith = (span) =>
      span.start === 10 ? { reason: 'poison', error: new Error('22P02 in column n') } : null;
    for (let at = 0; at < 30; at += 10) s.lane.offer(batch(at, at + 10));
    await until(() => s.lane.stats().deliveredBatches === 2);
    expect(new Set(s.quarantined.map((q) => q.note.reason))).toEqual(new Set(['contract']));
    expect(s.quarantined).toHaveLength(10);
    expect(s.quarantined[0]?.note.detail).toContain('22P02 in column n');
    expect(await s.covered()).toEqual([{ start: 0, end: 30 }]);
  });

  it('a submit refused for that batch alone quarantines its records and the lane carries on', async () => {
    const s = setup();
    s.sink.mode = 'auto';
    s.sink.refuseBatch = (span) =>
      span.start === 10 ? 'poison' : span.start === 20 ? 'transient' : null;
    for (let at = 0; at < 40; at += 10) s.lane.offer(batch(at, at + 10));
    await until(() => s.lane.stats().deliveredBatches === 2);
    expect(s.lane.current.kind).toBe('running');
    const reasons = s.quarantined.map((q) => `${q.note.offset}:${q.note.reason}`);
    expect(reasons.slice(0, 2)).toEqual(['10:contract', '11:contract']);
    expect(reasons.slice(10, 12)).toEqual(['20:retry-exhausted', '21:retry-exhausted']);
    expect(reasons).toHaveLength(20);
    // The poison span is held vacuously; the one whose retries ran out is a gap.
    expect(await s.covered()).toEqual([
      { start: 0, end: 20 },
      { start: 30, end: 40 },
    ]);
    expect(s.lane.stats()).toMatchObject({
      submittedBatches: 2,
      setAsideBatches: 2,
      shedBatches: 0,
    });
    expect(s.lane.pendingFloor(P)).toBeNull();
  });

  it('quarantines only what it submitted: records the derivation refused are not quarantined twice', async () => {
    const s = setup();
    s.sink.mode = 'auto';
    s.sink.refuseBatch = () => 'poison';
    const mixed: SourceBatch = {
      span: offsetSpan('t', 0, 0, 3),
      records: [
        ...records.slice(0, 1),
        ...makeRecords('t', 0, 2, () => 'not json').slice(1, 2),
        ...records.slice(2, 3),
      ],
    };
    s.lane.offer(mixed);
    await until(() => s.lane.stats().setAsideBatches === 1);
    expect(s.quarantined.map((q) => `${q.note.offset}:${q.note.reason}`)).toEqual([
      '1:decode',
      '0:contract',
      '2:contract',
    ]);
  });

  it('stop() drains into the sink and flushes it; what is not acknowledged by the deadline stays a gap', async () => {
    const s = setup();
    s.sink.mode = 'auto';
    s.lane.offer(batch(0, 10));
    await s.lane.stop(1000);
    expect(s.lane.current.kind).toBe('closed');
    expect(await s.covered()).toEqual([{ start: 0, end: 10 }]);
    expect(s.sink.closed).toBe(true);

    const stuck = setup();
    stuck.lane.offer(batch(0, 10));
    await until(() => stuck.sink.submitted === 1);
    // Never acknowledged: the flush waits, the drain deadline ends it.
    await stuck.lane.stop(5);
    expect(stuck.logs.some((l) => l.includes('not drained within 5 ms'))).toBe(true);
    expect(await stuck.covered()).toEqual([]);
    stuck.lane.offer(batch(10, 20));
    expect(stuck.lane.stats().shedBatches).toBe(1);
  });
});
