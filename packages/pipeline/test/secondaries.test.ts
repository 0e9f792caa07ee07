import { ManualClock, partitionKey, sinkId, type QuarantineEntry } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { secondary, type QuarantinedRecord } from '../src/index.js';
import { build } from './doubles/harness.js';
import { jsonRows, MemorySecondary, type MemoryRow } from './doubles/memory-sinks.js';
import { logsOf, MemoryGroupSource, MemoryStoreSource } from './doubles/memory-sources.js';
import { cycles, until } from './doubles/waits.js';

const covered = async (built: Awaited<ReturnType<typeof build>>, sink: string, partition = 0) =>
  (await built.coverage.covered({ sink: sinkId(sink), topic: 't', partition })).ranges();

describe('secondaries', () => {
  it('record coverage only after their own durable acknowledgement', async () => {
    const source = new MemoryStoreSource(logsOf('t', 1, 100), 10);
    source.endless = true;
    const clock = new ManualClock();
    const built = await build(source, {
      scheduler: clock,
      secondaries: 1,
      secondary: (s) => (s.mode = 'manual'),
    });
    void built.pipeline.run();
    const [sec] = built.secondaries;
    if (sec === undefined) throw new Error('no secondary');
    await until(() => sec.submitted === 10 && built.pipeline.stats().raw.durableRecords === 100);
    // Flow cycles write coverage: raw's is recorded, the secondary's waits for its acknowledgement.
    await cycles(clock, 2);
    expect(await covered(built, 'raw')).toEqual([{ start: 0, end: 100 }]);
    expect(await covered(built, 'sec0')).toEqual([]);
    await sec.ack(4);
    await cycles(clock);
    expect(await covered(built, 'sec0')).toEqual([{ start: 0, end: 40 }]);
    sec.mode = 'auto';
    void sec.ack();
    const stats = await built.pipeline.stop();
    expect(stats.secondaries[0]?.deliveredRecords).toBe(100);
  });

  it('a stalled secondary never holds up raw or the source position', async () => {
    const source = new MemoryGroupSource(logsOf('t', 2, 2000), 50);
    let release: () => void = () => undefined;
    const stall = new Promise<void>((r) => (release = r));
    const built = await build(source, {
      secondaries: 1,
      config: {
        secondaries: { sec0: { maxQueuedBatches: 8 } },
        shutdown: { secondaryDrainMs: 50 },
      },
      secondary: (s) => {
        s.stallSubmit = stall;
      },
    });
    const stats = await built.pipeline.run();
    release();
    expect(stats.raw.durableRecords).toBe(4000);
    expect(source.lastCommit({ topic: 't', partition: 0 })).toBe(2000);
    expect(source.lastCommit({ topic: 't', partition: 1 })).toBe(2000);
    const lane = stats.secondaries[0];
    // One batch was taken into the stalled submit, eight waited, the rest were shed to gaps.
    expect(lane?.shedBatches).toBeGreaterThan(60);
    expect(await covered(built, 'sec0')).toEqual([]);
    expect(await covered(built, 'raw')).toEqual([{ start: 0, end: 2000 }]);
  });

  it('a failing secondary is isolated: raw completes, its later spans stay gaps', async () => {
    const source = new MemoryGroupSource(logsOf('t', 1, 300), 10);
    const built = await build(source, {
      secondaries: 2,
      secondary: (s, i) => (s.failAfter = i === 0 ? 5 : null),
    });
    const stats = await built.pipeline.run();
    expect(stats.raw.durableRecords).toBe(300);
    expect(stats.secondaries[0]?.state).toBe('failed');
    // Every one of the 30 batches was either accepted by the sink or shed, never both.
    expect(stats.secondaries[0]?.submittedBatches).toBe(5);
    expect(stats.secondaries[0]?.shedBatches).toBe(25);
    expect(stats.secondaries[1]?.deliveredRecords).toBe(300);
    expect(await covered(built, 'sec0')).toEqual([{ start: 0, end: 50 }]);
    expect(await covered(built, 'sec1')).toEqual([{ start: 0, end: 300 }]);
    expect(built.log.some((l) => l.includes('secondary sec0 failed at t/0[50,60)'))).toBe(true);
  });

  it('quarantines malformed records with reason decode; the rest are delivered and covered', async () => {
    const source = new MemoryStoreSource(
      logsOf('t', 1, 50, (o) => (o % 10 === 3 ? `{not json ${o}` : JSON.stringify({ o }))),
      10,
    );
    const written: number[] = [];
    const built = await build(source, { secondaries: 1 });
    const stats = await built.pipeline.run();
    expect(stats.quarantine.byReason).toEqual({ decode: 5 });
    expect(stats.secondaries[0]?.deliveredRecords).toBe(45);
    expect(built.raw.holdsPrefix('t', 0, 50)).toBe(true);
    expect(built.secondaries[0]?.rows.has('0:3')).toBe(false);
    expect(await covered(built, 'sec0')).toEqual([{ start: 0, end: 50 }]);
    expect(written).toEqual([]);
  });

  it('hands quarantined records to the writer with their reason and offset', async () => {
    const source = new MemoryStoreSource(
      logsOf('t', 1, 20, (o) => (o === 7 ? 'garbage' : '{}')),
      5,
    );
    const entries: string[] = [];
    const { pipeline } = await build(source, {
      secondaries: 1,
      quarantineWriter: async (e) => {
        entries.push(
          `${e.reason}:${e.record.sink}:${e.record.offset}:${new TextDecoder().decode(e.record.value)}`,
        );
      },
    });
    const stats = await pipeline.run();
    expect(entries).toEqual(['decode:sec0:7:garbage']);
    expect(stats.quarantine.written).toBe(1);
  });

  it('writes the records quarantined while the secondaries drain at shutdown', async () => {
    const source = new MemoryStoreSource(
      logsOf('t', 1, 50, (o) => (o % 10 === 3 ? `{not json ${o}` : '{}')),
      10,
    );
    let release: () => void = () => undefined;
    const stall = new Promise<void>((r) => (release = r));
    const written: number[] = [];
    const { pipeline } = await build(source, {
      secondaries: 1,
      secondary: (s) => void (s.stallSubmit = stall),
      quarantineWriter: async (e) => {
        written.push(e.record.offset);
      },
    });
    const running = pipeline.run();
    // The secondary holds its first batch; the other four wait in its lane.
    await until(() => pipeline.stats().state === 'stopping');
    release();
    const stats = await running;
    expect(stats.quarantine.byReason).toEqual({ decode: 5 });
    expect(written.sort((a, b) => a - b)).toEqual([3, 13, 23, 33, 43]);
    expect(stats.quarantine.written).toBe(5);
  });

  it('a quarantine writer that never answers does not hang shutdown', async () => {
    const source = new MemoryStoreSource(
      logsOf('t', 1, 20, (o) => (o % 10 === 3 ? 'garbage' : '{}')),
      10,
    );
    const { pipeline } = await build(source, {
      secondaries: 1,
      config: { shutdown: { secondaryDrainMs: 20 } },
      quarantineWriter: () => new Promise<void>(() => undefined),
    });
    // A hang guard, not a timing assertion: the drain deadline is 20 ms.
    const hung = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5000).unref());
    const outcome = await Promise.race([pipeline.run(), hung]);
    expect(outcome).not.toBe('hung');
    const stats = pipeline.stats();
    expect(stats.state).toBe('stopped');
    // One entry is stuck in the writer; the other is counted, not silently lost.
    expect(stats.quarantine.written + stats.quarantine.discarded).toBe(1);
  });

  it('sends records over maxRecordBytes to quarantine as oversized; raw keeps them', async () => {
    const source = new MemoryStoreSource(
      logsOf('t', 1, 10, (o) => (o === 4 ? JSON.stringify({ pad: 'x'.repeat(5000) }) : '{}')),
      10,
    );
    const built = await build(source, { secondaries: 1, config: { maxRecordBytes: 1024 } });
    const stats = await built.pipeline.run();
    expect(stats.quarantine.byReason).toEqual({ oversized: 1 });
    expect(built.raw.holdsPrefix('t', 0, 10)).toBe(true);
    expect(built.secondaries[0]?.rows.size).toBe(9);
  });

  it('a derivation that throws quarantines its batch whole, with the reason and the records as delivered; ingest goes on', async () => {
    const logs = logsOf('t', 1, 12);
    const log = logs.get(partitionKey({ topic: 't', partition: 0 }));
    if (log === undefined) throw new Error('no log');
    // Record 5 carries a header a derivation that builds header maps trips on.
    log.records[5] = {
      ...log.records[5]!,
      headers: [
        ['constructor', Buffer.from('c')],
        ['constructor', null],
      ],
    };
    const source = new MemoryStoreSource(logs, 4);
    const rows = new Map<string, MemoryRow>();
    const entries: QuarantineEntry<QuarantinedRecord>[] = [];
    const built = await build(source, {
      coverage: new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('strict')] }),
      extraSecondaries: [
        secondary<MemoryRow[]>({
          open: (confirm) =>
            new MemorySecondary(confirm, 'strict', { kind: 'server-ack' }, [], rows),
          derive: (batch) => {
            for (const r of batch.records) {
              if (r.headers.some(([name]) => name in Object.prototype)) {
                throw new Error(`offset ${r.offset}: a header named like a prototype property`);
              }
            }
            return jsonRows(batch);
          },
        }),
      ],
      quarantineWriter: async (e) => {
        entries.push(e);
      },
    });
    const stats = await built.pipeline.run();
    expect(stats.raw.durableRecords).toBe(12);
    expect(built.raw.holdsPrefix('t', 0, 12)).toBe(true);
    // The batch [4, 8) is refused whole; the others are rows.
    expect([...rows.values()].map((r) => r.offset)).toEqual([0, 1, 2, 3, 8, 9, 10, 11]);
    expect(entries.map((e) => [e.reason, e.record.sink, e.record.offset])).toEqual([
      ['decode', 'strict', 4],
      ['decode', 'strict', 5],
      ['decode', 'strict', 6],
      ['decode', 'strict', 7],
    ]);
    expect(entries[1]?.detail).toBe('offset 5: a header named like a prototype property');
    expect(entries[1]?.record.headers).toEqual([
      ['constructor', Buffer.from('c')],
      ['constructor', null],
    ]);
    expect(await covered(built, 'strict')).toEqual([{ start: 0, end: 12 }]);
  });

  it('a derivation that answers later is delivered in raw order; one that rejects quarantines its batch whole', async () => {
    const source = new MemoryStoreSource(logsOf('t', 1, 12), 4);
    const rows = new Map<string, MemoryRow>();
    const entries: QuarantineEntry<QuarantinedRecord>[] = [];
    const built = await build(source, {
      coverage: new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('later')] }),
      extraSecondaries: [
        secondary<MemoryRow[]>({
          open: (confirm) =>
            new MemorySecondary(confirm, 'later', { kind: 'server-ack' }, [], rows),
          // As a worker thread's derivation answers: after the lane moved on to wait.
          derive: async (batch) => {
            await new Promise((resolve) => setImmediate(resolve));
            if (batch.span.start === 4) throw new Error('the derivation thread died twice');
            return jsonRows(batch);
          },
        }),
      ],
      quarantineWriter: async (e) => {
        entries.push(e);
      },
    });
    const stats = await built.pipeline.run();
    expect(stats.raw.durableRecords).toBe(12);
    expect([...rows.values()].map((r) => r.offset)).toEqual([0, 1, 2, 3, 8, 9, 10, 11]);
    expect(entries.map((e) => [e.reason, e.record.offset, e.detail])).toEqual(
      [4, 5, 6, 7].map((o) => ['decode', o, 'the derivation thread died twice']),
    );
    expect(await covered(built, 'later')).toEqual([{ start: 0, end: 12 }]);
  });
});
