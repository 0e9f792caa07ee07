import { sinkId, type QuarantineEntry, type SourceRecord } from '@thalweg/connector-core';
import { InMemoryCoverage, RangeSet } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checked,
  FileDqAudit,
  InMemoryDqAudit,
  Pipeline,
  secondary,
  type QuarantinedRecord,
  type SecondarySpec,
} from '../../src/index.js';
import { build, keepOpen } from '../doubles/harness.js';
import { MemorySecondary, type MemoryRow } from '../doubles/memory-sinks.js';
import { logsOf, MemoryStoreSource } from '../doubles/memory-sources.js';
import { tempFiles } from './temp-files.js';

const DQ = 'dq-sink';

const tempPath = tempFiles('twg-dq-pipeline-');
const auditPath = () => tempPath('dq-audit.jsonl');

interface Row {
  readonly n: number;
  readonly p: number;
}

const rowOf = (r: SourceRecord): Row => JSON.parse(new TextDecoder().decode(r.value)) as Row;

/** Fails offsets ending in 7 (a predicate) and offsets from 90 on (a schema): 19 of each 100. */
const derive = checked(rowOf)
  .check('not a 7', (r) => r.n % 10 !== 7 || `n ${r.n} ends in 7`)
  .schema('below 90', z.object({ n: z.number().max(89) }))
  .build((rows, passing) =>
    rows.map((row, i): MemoryRow => ({
      offset: passing.records[i]?.offset ?? -1,
      text: JSON.stringify(row),
    })),
  );

function dqSecondary(
  table: Map<string, MemoryRow>,
  failAfter: number | null = null,
): SecondarySpec<unknown> {
  return secondary<MemoryRow[]>({
    open: (confirm) => {
      const sink = new MemorySecondary(confirm, DQ, { kind: 'server-ack' }, [], table);
      sink.failAfter = failAfter;
      return sink;
    },
    derive,
  });
}

const coverageStore = () => keepOpen(new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId(DQ)] }));

describe('data-quality checks in a pipeline', () => {
  it('quarantine failing rows as dq, deliver and cover the rest, and audit every window durably', async () => {
    const path = await auditPath();
    const quarantined: QuarantineEntry<QuarantinedRecord>[] = [];
    const table = new Map<string, MemoryRow>();
    const coverage = coverageStore();
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 100), 10), {
      coverage,
      extraSecondaries: [dqSecondary(table)],
      dqAudit: await FileDqAudit.open({ path }),
      quarantineWriter: async (entry) => {
        quarantined.push(entry);
      },
    });
    const stats = await built.pipeline.run();

    expect(quarantined.map((q) => q.record.offset).sort((a, b) => a - b)).toEqual([
      7, 17, 27, 37, 47, 57, 67, 77, 87, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
    ]);
    expect(new Set(quarantined.map((q) => q.reason))).toEqual(new Set(['dq']));
    expect(quarantined.find((q) => q.record.offset === 97)?.detail).toMatch(
      /^dq check 'not a 7' failed: n 97 ends in 7; dq check 'below 90' failed at n: /,
    );
    expect(quarantined.every((q) => q.record.sink === DQ)).toBe(true);
    expect(stats.quarantine.byReason).toEqual({ dq: 19 });
    // The passing rows are delivered, and the whole span is covered.
    expect(table.size).toBe(81);
    expect(table.has('0:7')).toBe(false);
    expect(table.has('0:8')).toBe(true);
    const covered = await coverage.covered({ sink: sinkId(DQ), topic: 't', partition: 0 });
    expect(covered.equals(RangeSet.of([{ start: 0, end: 100 }]))).toBe(true);
    expect(stats.dq.bySink[DQ]).toEqual({
      'not a 7': { passed: 90, failed: 10 },
      'below 90': { passed: 90, failed: 10 },
    });
    expect(stats.dq).toMatchObject({ recorded: 20, buffered: 0, failures: 0 });

    // Shutdown wrote and closed the trail: a reopen reads every window.
    const audit = await FileDqAudit.open({ path });
    const windows = await audit.read({ sink: DQ });
    expect(windows).toHaveLength(20);
    expect(
      windows.filter((w) => w.check === 'below 90').map((w) => [w.span.start, w.failed]),
    ).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90].map((s) => [s, s === 90 ? 10 : 0]));
    expect(await audit.totals(DQ)).toEqual(stats.dq.bySink[DQ]);
    await audit.close();
  });

  it('count a span once when recovery derives it again, in other batches', async () => {
    const path = await auditPath();
    const coverage = coverageStore();
    const rawHeld = new Map<string, Map<number, Uint8Array>>();
    const table = new Map<string, MemoryRow>();
    const source = () => new MemoryStoreSource(logsOf('t', 2, 300), 20);
    // The sink refuses its fifth batch: that batch was derived and checked
    // (so audited), and it and the rest become gaps for recovery.
    const ingest = await build(source(), {
      coverage,
      rawHeld,
      extraSecondaries: [dqSecondary(table, 4)],
      dqAudit: await FileDqAudit.open({ path }),
      config: { recovery: { role: 'ingest' } },
    });
    const first = await ingest.pipeline.run();
    expect(first.secondaries[0]?.state).toBe('failed');

    const recovery = await build(source(), {
      coverage,
      rawHeld,
      extraSecondaries: [dqSecondary(table)],
      dqAudit: await FileDqAudit.open({ path }),
      config: { recovery: { role: 'recovery', windowRecords: 64 } },
    });
    const second = await recovery.pipeline.run({ untilCaughtUp: true });
    expect(second.recovery?.recordsReplayed).toBe(520);

    const seen = (s: typeof first) => {
      const c = s.dq.bySink[DQ]?.['below 90'];
      return (c?.passed ?? 0) + (c?.failed ?? 0);
    };
    // Both runs together checked more rows than there are: one batch twice.
    expect(seen(first) + seen(second)).toBe(620);
    const audit = await FileDqAudit.open({ path });
    // The trail counts each of the 600 rows once, per check.
    expect(await audit.totals(DQ)).toEqual({
      'not a 7': { passed: 540, failed: 60 },
      'below 90': { passed: 180, failed: 420 },
    });
    await audit.close();
  });

  it('keep the lane running when a check throws: the row fails that check, the rest are delivered', async () => {
    const table = new Map<string, MemoryRow>();
    const quarantined: QuarantineEntry<QuarantinedRecord>[] = [];
    const throwing = checked(rowOf)
      .check('lookup', (r) => {
        if (r.n % 25 === 0) throw new Error(`no rate for ${r.n}`);
        return true;
      })
      .build((rows, passing) =>
        rows.map((row, i): MemoryRow => ({
          offset: passing.records[i]?.offset ?? -1,
          text: JSON.stringify(row),
        })),
      );
    const built = await build(new MemoryStoreSource(logsOf('t', 1, 100), 10), {
      coverage: coverageStore(),
      extraSecondaries: [
        secondary<MemoryRow[]>({
          open: (confirm) => new MemorySecondary(confirm, DQ, { kind: 'server-ack' }, [], table),
          derive: throwing,
        }),
      ],
      dqAudit: new InMemoryDqAudit(),
      quarantineWriter: async (entry) => {
        quarantined.push(entry);
      },
    });
    const stats = await built.pipeline.run();
    expect(stats.secondaries[0]).toMatchObject({ state: 'closed', deliveredRecords: 96 });
    expect(table.size).toBe(96);
    expect(quarantined.map((q) => [q.record.offset, q.reason, q.detail])).toEqual(
      [0, 25, 50, 75].map((n) => [n, 'dq', `dq check 'lookup' threw: no rate for ${n}`]),
    );
    expect(stats.dq.bySink[DQ]).toEqual({ lookup: { passed: 96, failed: 4 } });
  });

  it('refuse a topology that declares checks with nowhere to audit them, releasing what it owns', async () => {
    const source = new MemoryStoreSource(logsOf('t', 1, 10), 10);
    let rawOpened = false;
    await expect(
      Pipeline.open({
        source,
        coverage: coverageStore(),
        primaryRaw: () => {
          rawOpened = true;
          throw new Error('never opened');
        },
        secondaries: [dqSecondary(new Map())],
      }),
    ).rejects.toMatchObject({
      code: 'TWG_PIPELINE_TOPOLOGY_INVALID',
      message: expect.stringContaining(
        'secondaries[0] declares dq checks (not a 7, below 90) but the spec has no dqAudit store',
      ) as unknown,
    });
    expect(rawOpened).toBe(false);
    expect(source.closed).toBe(true);
  });
});
