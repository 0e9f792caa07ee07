import { offsetSpan, sinkId, type SourceBatch } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../src/coverage-recorder.js';
import { secondaryConfigSchema } from '../src/pipeline-config.js';
import { SecondaryLane } from '../src/secondary-lane.js';
import type { QuarantineNote } from '../src/topology.js';
import { jsonRows, MemorySecondary } from './doubles/memory-sinks.js';
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

function setup(config: { maxQueuedBatches?: number; maxQueuedBytes?: number } = {}) {
  const coverage = new InMemoryCoverage({ sinks: [SEC] });
  const logs: string[] = [];
  const recorder = new CoverageRecorder(coverage, (l) => logs.push(l));
  const quarantined: { sink: string; note: QuarantineNote }[] = [];
  const lane = new SecondaryLane(
    'secondaries[0]',
    jsonRows,
    recorder,
    (sink, _b, note) => quarantined.push({ sink, note }),
    (l) => logs.push(l),
  );
  const sink = new MemorySecondary(lane.target, 'sec0');
  sink.mode = 'manual';
  lane.start(sink, secondaryConfigSchema.parse(config));
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
