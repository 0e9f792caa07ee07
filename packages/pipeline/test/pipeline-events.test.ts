import {
  events,
  formatSpan,
  offsetSpan,
  type BatchReadEvent,
  type CommittedEvent,
  type QuarantinedEvent,
  type SubmittedEvent,
} from '@thalweg/connector-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { build } from './doubles/harness.js';
import { logsOf, MemoryGroupSource } from './doubles/memory-sources.js';

// The pipeline's own channels, seen by a subscriber in a small run: one
// partition of 30 records in batches of 10, one secondary that refuses
// (quarantines) the record at offset 5, and a broker that refuses the first
// commit.
const unsubscribers: (() => void)[] = [];
afterEach(() => {
  for (const off of unsubscribers.splice(0)) off();
  vi.restoreAllMocks();
});

/** What each channel carried, and one line per event in the order they came. */
function listen() {
  const seen = {
    batchRead: [] as BatchReadEvent[],
    submitted: [] as SubmittedEvent[],
    committed: [] as CommittedEvent[],
    quarantined: [] as QuarantinedEvent[],
    order: [] as string[],
  };
  unsubscribers.push(
    events.batchRead.subscribe((m) => {
      seen.batchRead.push(m);
      seen.order.push(`read ${formatSpan(m.span)}`);
    }),
    events.submitted.subscribe((m) => {
      seen.submitted.push(m);
      seen.order.push(`${m.lane} ${formatSpan(m.span)}`);
    }),
    events.committed.subscribe((m) => {
      seen.committed.push(m);
      seen.order.push(`committed ${m.next}`);
    }),
    events.quarantined.subscribe((m) => {
      seen.quarantined.push(m);
      seen.order.push(`quarantined ${m.offset}`);
    }),
  );
  return seen;
}

const value = (o: number): string => (o === 5 ? 'not json' : JSON.stringify({ n: o }));
const source = () => {
  const s = new MemoryGroupSource(logsOf('t', 1, 30, value), 10);
  s.commitFailures = 1;
  return s;
};
/** What the pipeline charges a record: its bytes and a fixed overhead of 64 (batch-split.ts). */
const bytesOf = (from: number, to: number): number => {
  let n = 0;
  for (let o = from; o < to; o++) n += 64 + new TextEncoder().encode(value(o)).byteLength;
  return n;
};
const span = (start: number) => offsetSpan('t', 0, start, start + 10);

describe('pipeline events', () => {
  it('a subscriber sees each batch read, submitted to raw and the secondary, committed and quarantined', async () => {
    const seen = listen();
    const src = source();
    const { pipeline } = await build(src, { secondaries: 1 });
    await pipeline.run();
    expect(seen.batchRead).toEqual(
      [0, 10, 20].map((s) => ({
        span: span(s),
        records: 10,
        bytes: bytesOf(s, s + 10),
      })),
    );
    const submitted = seen.submitted;
    expect(submitted.filter((m) => m.lane === 'primary-raw')).toEqual(
      [0, 10, 20].map((s) => ({ sink: 'raw', lane: 'primary-raw', span: span(s), records: 10 })),
    );
    // The secondary was handed what its derivation did not quarantine.
    expect(submitted.filter((m) => m.lane === 'secondary')).toEqual(
      [0, 10, 20].map((s) => ({
        sink: 'sec0',
        lane: 'secondary',
        span: span(s),
        records: s === 0 ? 9 : 10,
      })),
    );
    expect(seen.quarantined).toEqual([
      { sink: 'sec0', reason: 'decode', topic: 't', partition: 0, offset: 5 },
    ]);
    // Only the commits the broker took: the refused first one is no event.
    const committed = seen.committed;
    expect(committed.length).toBeGreaterThan(0);
    expect(committed).toEqual(src.commits);
    expect(committed.at(-1)).toEqual({ partition: { topic: 't', partition: 0 }, next: 30 });

    // In order: a batch is read before raw takes it, and raw takes it before
    // the secondary does and before a commit covers it.
    const at = (line: string): number => seen.order.indexOf(line);
    for (const s of [0, 10, 20]) {
      const key = formatSpan(span(s));
      const read = at(`read ${key}`);
      const commit = seen.order.findIndex(
        (l) => /^committed (\d+)$/.exec(l)?.[1] === String(s + 10),
      );
      expect(read).toBeGreaterThanOrEqual(0);
      expect(read).toBeLessThan(at(`primary-raw ${key}`));
      expect(at(`primary-raw ${key}`)).toBeLessThan(at(`secondary ${key}`));
      if (commit >= 0) expect(at(`primary-raw ${key}`)).toBeLessThan(commit);
    }
    // The derivation refused the record before the rest of its batch was handed over.
    expect(at('quarantined 5')).toBeLessThan(at(`secondary ${formatSpan(span(0))}`));
    const last = at('committed 30');
    expect(last).toBeGreaterThan(at(`primary-raw ${formatSpan(span(20))}`));
    const reads = seen.batchRead.map((m) => m.span.start);
    expect(reads).toEqual([...reads].sort((a, b) => a - b));
  });

  it('builds no message when nobody listens', async () => {
    const spies = [events.batchRead, events.submitted, events.committed, events.quarantined].map(
      (c) => {
        expect(c.active).toBe(false);
        return vi.spyOn(c, 'publish');
      },
    );
    const src = source();
    const { pipeline } = await build(src, { secondaries: 1 });
    const stats = await pipeline.run();
    // The run did what makes each event: read, submitted, quarantined, committed.
    expect(stats.raw.durableRecords).toBe(30);
    expect(pipeline.stats().quarantine.byReason.decode).toBe(1);
    expect(src.lastCommit({ topic: 't', partition: 0 })).toBe(30);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});
