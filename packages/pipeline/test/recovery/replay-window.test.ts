import {
  offsetSpan,
  sinkId,
  type ConfirmTarget,
  type OffsetSpan,
  type SourceBatch,
} from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import type { QuarantineNote } from '../../src/index.js';
import { replayWindow, type ReplayOptions } from '../../src/recovery/replay-window.js';
import type { RecoveryWindow } from '../../src/recovery/recovery-window.js';
import { jsonRows, MemoryRawSink, MemorySecondary } from '../doubles/memory-sinks.js';
import { makeRecords } from '../doubles/memory-sources.js';

// replayWindow alone: a raw that reads back whole batches of ten, whatever
// was asked for, and a secondary that records what it was given.

const SEC = sinkId('sec0');
const ignore: ConfirmTarget<'primary-raw' | 'secondary'> = { apply: async () => undefined };

/** Reads back raw's records in batches of ten (aligned), as a segment store returns whole segments. */
class SegmentRaw extends MemoryRawSink {
  constructor(records: number, value?: (offset: number) => string) {
    super(ignore);
    const held = new Map<number, Uint8Array>();
    for (const r of makeRecords('t', 0, records, value)) held.set(r.offset, r.value);
    this.stored.set('t\u00000', held);
  }

  override async *read(span: OffsetSpan): AsyncIterable<SourceBatch> {
    const all = makeRecords('t', 0, this.stored.get('t\u00000')?.size ?? 0);
    for (let at = Math.floor(span.start / 10) * 10; at < span.end; at += 10) {
      const records = all.slice(at, at + 10).map((r) => ({
        ...r,
        value: this.stored.get('t\u00000')?.get(r.offset) ?? r.value,
      }));
      if (records.length > 0) yield { span: offsetSpan('t', 0, at, at + records.length), records };
    }
  }
}

function window(gaps: { start: number; end: number }[]): RecoveryWindow {
  return {
    key: 'sec0/t/0/0/0',
    sink: SEC,
    topic: 't',
    partition: 0,
    gaps,
    records: gaps.reduce((n, g) => n + g.end - g.start, 0),
  };
}

function setup(overrides: Partial<ReplayOptions> = {}) {
  const sink = new MemorySecondary(ignore, 'sec0');
  const spans: string[] = [];
  const submit = sink.submit.bind(sink);
  sink.submit = (batch, span, confirm) => {
    spans.push(`[${span.start},${span.end})`);
    return submit(batch, span, confirm);
  };
  const quarantined: { sink: string; note: QuarantineNote }[] = [];
  const empty: string[] = [];
  const options: ReplayOptions = {
    signal: new AbortController().signal,
    maxMs: 60_000,
    quarantineMode: 'rehydrate',
    maxRecordBytes: 1024,
    quarantine: (s, _batch, note) => quarantined.push({ sink: s, note }),
    recordEmpty: (span) => empty.push(`[${span.start},${span.end})`),
    keepLease: async () => true,
    now: () => 0,
    ...overrides,
  };
  return { sink, spans, quarantined, empty, options, target: { sink, derive: jsonRows } };
}

describe('replayWindow', () => {
  it('counts what raw did not give back (its reads trail its acks): the window is not whole', async () => {
    // raw shows offsets up to 20 only; the window asks [5, 12) and [15, 30)
    const raw = new SegmentRaw(20);
    const s = setup();
    const outcome = await replayWindow(
      raw,
      window([
        { start: 5, end: 12 },
        { start: 15, end: 30 },
      ]),
      s.target,
      s.options,
    );
    expect(outcome).toEqual({ kind: 'done', records: 12, quarantineSkipped: 0, unread: 10 });
    expect(s.spans).toEqual(['[5,10)', '[10,12)', '[15,20)']);
  });

  it('clips what raw reads back to the gaps: nothing outside them is written or claimed', async () => {
    const raw = new SegmentRaw(40);
    const s = setup();
    const outcome = await replayWindow(
      raw,
      window([
        { start: 5, end: 12 },
        { start: 25, end: 30 },
      ]),
      s.target,
      s.options,
    );
    expect(outcome).toEqual({ kind: 'done', records: 12, quarantineSkipped: 0, unread: 0 });
    expect(s.spans).toEqual(['[5,10)', '[10,12)', '[25,30)']);
    expect([...s.sink.rows.keys()].sort()).toHaveLength(12);
    expect(s.sink.pending).toEqual([]);
  });

  it('quarantines again what the derivation refuses (rehydrate), or only counts it (skip-dlq)', async () => {
    const value = (o: number) => (o % 10 === 3 ? 'not json' : '{}');
    const again = setup();
    await replayWindow(new SegmentRaw(20, value), window([{ start: 0, end: 20 }]), again.target, {
      ...again.options,
    });
    expect(again.quarantined.map((q) => [q.sink, q.note.offset, q.note.reason])).toEqual([
      [SEC, 3, 'decode'],
      [SEC, 13, 'decode'],
    ]);
    const skip = setup({ quarantineMode: 'skip-dlq' });
    const outcome = await replayWindow(
      new SegmentRaw(20, value),
      window([{ start: 0, end: 20 }]),
      skip.target,
      skip.options,
    );
    expect(skip.quarantined).toEqual([]);
    expect(outcome).toEqual({ kind: 'done', records: 20, quarantineSkipped: 2, unread: 0 });
  });

  it("keeps a record over maxRecordBytes from the sink, as the live path does, under raw's name", async () => {
    const big = (o: number) => (o === 4 ? JSON.stringify({ pad: 'x'.repeat(2000) }) : '{}');
    const s = setup();
    const raw = new SegmentRaw(10, big);
    await replayWindow(raw, window([{ start: 0, end: 10 }]), s.target, s.options);
    expect(s.quarantined.map((q) => [q.sink, q.note.offset, q.note.reason])).toEqual([
      [raw.descriptor.id, 4, 'oversized'],
    ]);
    expect(s.sink.rows.has('0:4')).toBe(false);
    expect(s.sink.rows.size).toBe(9);
  });

  it('a batch the derivation leaves nothing of is recorded as held vacuously, not submitted', async () => {
    const s = setup();
    await replayWindow(
      new SegmentRaw(20, (o) => (o < 10 ? 'garbage' : '{}')),
      window([{ start: 0, end: 20 }]),
      s.target,
      s.options,
    );
    expect(s.empty).toEqual(['[0,10)']);
    expect(s.spans).toEqual(['[10,20)']);
  });

  it('stops at a batch boundary once past maxMs or once the lease is lost, after a flush', async () => {
    let now = 0;
    const slow = setup({
      maxMs: 5,
      now: () => now,
    });
    const submit = slow.sink.submit.bind(slow.sink);
    slow.sink.submit = async (batch, span, confirm) => {
      now += 10;
      return submit(batch, span, confirm);
    };
    const timedOut = await replayWindow(
      new SegmentRaw(30),
      window([{ start: 0, end: 30 }]),
      slow.target,
      slow.options,
    );
    expect(timedOut).toEqual({ kind: 'timed-out', records: 10, quarantineSkipped: 0 });
    // Flushed before returning: what was replayed is acknowledged, and may be covered.
    expect(slow.sink.pending).toEqual([]);

    let renewals = 0;
    const lost = setup({ keepLease: async () => ++renewals < 2 });
    const outcome = await replayWindow(
      new SegmentRaw(30),
      window([{ start: 0, end: 30 }]),
      lost.target,
      lost.options,
    );
    expect(outcome).toEqual({ kind: 'lease-lost', records: 20, quarantineSkipped: 0 });
  });

  it('an abort ends a submit the sink never accepts, and claims nothing', async () => {
    const abort = new AbortController();
    const s = setup({ signal: abort.signal });
    s.sink.stallSubmit = new Promise<void>(() => undefined);
    const replaying = replayWindow(new SegmentRaw(10), window([{ start: 0, end: 10 }]), s.target, {
      ...s.options,
    });
    while (s.sink.waitingSubmits === 0) await new Promise((r) => setImmediate(r));
    abort.abort();
    expect(await replaying).toEqual({ kind: 'aborted', records: 0, quarantineSkipped: 0 });
    expect(s.sink.rows.size).toBe(0);
  });
});
