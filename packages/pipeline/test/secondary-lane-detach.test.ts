import { offsetSpan, sinkId, type SourceBatch, type SourceRecord } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { CoverageRecorder } from '../src/coverage-recorder.js';
import { resolveLaneSettings } from '../src/pipeline-config.js';
import { SecondaryLane } from '../src/secondary-lane.js';
import { jsonRows, MemorySecondary } from './doubles/memory-sinks.js';
import { makeRecords } from './doubles/memory-sources.js';
import { until } from './doubles/waits.js';

// What a secondary lane keeps while its sink is behind: copies of the
// batches' bytes, not the source's read buffers (batch-detach.ts).

const SEC = sinkId('sec0');
const records = makeRecords('t', 0, 40);
const batch = (start: number, end: number): SourceBatch => ({
  span: offsetSpan('t', 0, start, end),
  records: records.slice(start, end),
});

/** A record's fields with its value as text (a copy is a Buffer, the original a Uint8Array). */
const text = (r: SourceRecord) => ({ ...r, value: Buffer.from(r.value).toString() });

function setup(config: { maxQueuedBatches?: number } = {}) {
  const derived: SourceBatch[] = [];
  const recorder = new CoverageRecorder(new InMemoryCoverage({ sinks: [SEC] }), () => undefined);
  const lane = new SecondaryLane(
    'secondaries[0]',
    (b: SourceBatch) => {
      derived.push(b);
      return jsonRows(b);
    },
    recorder,
    () => undefined,
    () => undefined,
  );
  const sink = new MemorySecondary(lane.target, 'sec0');
  let release = (): void => undefined;
  sink.stallSubmit = new Promise<void>((r) => (release = r));
  lane.start(sink, resolveLaneSettings(config));
  return { lane, sink, derived, release };
}

describe('SecondaryLane keeps what waits detached', () => {
  it('passes the batch the pump takes next as it is, and copies those queued behind it', async () => {
    const s = setup();
    s.lane.offer(batch(0, 10));
    s.lane.offer(batch(10, 20));
    s.lane.offer(batch(20, 30));
    s.release();
    await until(() => s.derived.length === 3);
    const [first, second, third] = s.derived;
    expect(first?.records[0]).toBe(records[0]);
    for (const [b, start] of [
      [second, 10],
      [third, 20],
    ] as const) {
      expect(b?.records.map(text)).toEqual(records.slice(start, start + 10).map(text));
      expect(b?.records[0]).not.toBe(records[start]);
      expect(b?.records[0]?.value.buffer).not.toBe(records[start]?.value.buffer);
    }
    await until(() => s.sink.submitted === 3);
    expect(s.lane.stats()).toMatchObject({ shedBatches: 0, submittedBatches: 3 });
  });

  it('sheds a batch the full queue cannot take, after taking the head', async () => {
    const s = setup({ maxQueuedBatches: 2 });
    s.lane.offer(batch(0, 10)); // taken by the pump, which waits in submit
    await until(() => s.sink.waitingSubmits === 1);
    s.lane.offer(batch(10, 20));
    s.lane.offer(batch(20, 30));
    s.lane.offer(batch(30, 40)); // the queue holds two: shed
    expect(s.lane.stats()).toMatchObject({ shedBatches: 1, queuedBatches: 2 });
    s.release();
    await until(() => s.derived.length === 3);
    expect(s.derived.map((b) => b.span.start)).toEqual([0, 10, 20]);
  });
});
