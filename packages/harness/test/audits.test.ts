import { sinkId } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import {
  overclaimedRanges,
  rawCoverageHoles,
  secondaryBacklog,
  type CoverageView,
} from '../src/coverage-audit.js';
import { auditFinal } from '../src/final-audit.js';
import { PG, RAW } from '../src/harness-topology.js';
import type { ZerobusContents } from '../src/zerobus-audit.js';
import { ZEROBUS } from '../src/zerobus-topology.js';
import { contiguousPrefix, type RawContents, type RawRecord } from '../src/raw-audit.js';
import type { TableRow } from '../src/table-audit.js';

const T = 'topic';

/** Raw holding `offsets` of partition 0, each record with id `r<o>` and payload `p<o>`. */
function raw(offsets: number[], copies = offsets.length): RawContents {
  const held = new Map<number, RawRecord>(
    offsets.map((o) => [o, { recordId: `r${o}`, payloadId: `p${o}` }]),
  );
  return { records: [held], copies, errors: [] };
}

/** What the Zerobus server acknowledged: the rows of `offsets` of partition 0. */
function zb(offsets: number[]): ZerobusContents {
  return {
    recordIds: new Set(offsets.map((o) => `r${o}`)),
    payloadIds: new Set(offsets.map((o) => `p${o}`)),
    batches: 1,
    rows: offsets.length,
  };
}

const row = (offset: number, recordId = `r${offset}`, id = `p${offset}`): TableRow => ({
  recordId,
  id,
  partition: 0,
  offset,
});

const view = (store: string, sink: string, ranges: [number, number][]): CoverageView => ({
  store,
  key: { sink: sinkId(sink), topic: T, partition: 0 },
  ranges: ranges.map(([start, end]) => ({ start, end })),
});

describe('auditFinal', () => {
  const produced = ['p0', 'p1', 'p2', 'p3'];

  it('finds nothing in a complete run, and counts raw copies beyond the first', () => {
    const audit = auditFinal({
      offsets: [[0, 1, 2, 3]],
      producedIds: produced,
      raw: raw([0, 1, 2, 3], 7),
      rows: [0, 1, 2, 3].map((o) => row(o)),
      zerobus: zb([0, 1, 2, 3]),
    });
    expect(audit).toEqual({
      missingRaw: 0,
      missingSecondary: 0,
      missingBySink: { [PG]: 0, [ZEROBUS]: 0 },
      zerobusUnknownIds: 0,
      duplicateRows: 0,
      idMismatches: 0,
      rawDuplicates: 3,
    });
  });

  it('counts a hole in raw and in the table', () => {
    const audit = auditFinal({
      offsets: [[0, 1, 2, 3]],
      producedIds: produced,
      raw: raw([0, 1, 3]),
      rows: [row(0), row(3)],
      zerobus: zb([0, 1, 3]),
    });
    expect(audit.missingRaw).toBe(1);
    // The table lacks 1 and 2; Zerobus lacks 2 (and cannot hold 1's id: raw lacks it).
    expect(audit.missingBySink).toEqual({ [PG]: 2, [ZEROBUS]: 1 });
    expect(audit.missingSecondary).toBe(3);
  });

  it('counts what Zerobus lacks by record id and by payload id, and ids nothing produced', () => {
    const audit = auditFinal({
      offsets: [[0, 1, 2, 3]],
      producedIds: produced,
      raw: raw([0, 1, 2, 3]),
      rows: [0, 1, 2, 3].map((o) => row(o)),
      zerobus: {
        recordIds: new Set(['r0', 'r1', 'r3', 'stray']),
        payloadIds: new Set(['p0', 'p3']),
        batches: 2,
        rows: 4,
      },
    });
    expect(audit.missingBySink).toEqual({ [PG]: 0, [ZEROBUS]: 2 });
    expect(audit.missingSecondary).toBe(2);
    expect(audit.zerobusUnknownIds).toBe(1);
  });

  it('counts a produced record stored at the wrong offset as missing by id', () => {
    const audit = auditFinal({
      offsets: [[0, 1]],
      producedIds: ['p0', 'p1', 'p2'],
      raw: raw([0, 1]),
      rows: [row(0), row(1)],
      zerobus: zb([0, 1]),
    });
    expect(audit.missingRaw).toBe(1);
    expect(audit.missingSecondary).toBe(2);
    expect(audit.missingBySink).toEqual({ [PG]: 1, [ZEROBUS]: 1 });
  });

  it('audits sparse offsets (Pulsar) by the offsets the records got, not [0, end)', () => {
    const audit = auditFinal({
      offsets: [[1024, 5120, 9216]],
      producedIds: ['p1024', 'p5120', 'p9216'],
      raw: raw([1024, 9216]),
      rows: [row(1024), row(9216)],
      zerobus: zb([1024, 9216]),
    });
    expect(audit.missingRaw).toBe(1);
    expect(audit.missingBySink).toEqual({ [PG]: 1, [ZEROBUS]: 1 });
    expect(audit.rawDuplicates).toBe(0);
  });

  it('counts two record ids for one position and ids that differ from raw', () => {
    const audit = auditFinal({
      offsets: [[0, 1]],
      producedIds: ['p0', 'p1'],
      raw: raw([0, 1]),
      rows: [row(0), row(0, 'other'), row(1, 'r1', 'p9')],
      zerobus: zb([0, 1]),
    });
    expect(audit.duplicateRows).toBe(1);
    expect(audit.idMismatches).toBe(2);
  });
});

describe('coverage audits', () => {
  it('names every range that claims an offset its sink lacks', () => {
    const rawHeld = new Set([0, 1, 2, 3, 4]);
    const table = new Set([0, 1, 3]);
    const claims = overclaimedRanges(
      [
        view('pipeline-durable', RAW, [[0, 5]]),
        view('sink-transactional', PG, [
          [0, 2],
          [3, 5],
        ]),
      ],
      (sink, _p, o) => (sink === RAW ? rawHeld.has(o) : table.has(o)),
    );
    expect(claims).toEqual(['sink-transactional:pg-events/topic/0:[3,5) lacks 4']);
  });

  it('checks a sparse range only at the offsets a record can be at', () => {
    const held = new Set([1024, 9216]);
    const ranges = [view('pipeline-durable', RAW, [[1024, 9217]])];
    const at = (offsets: number[]) => (_p: number, start: number, end: number) =>
      offsets.filter((o) => o >= start && o < end);
    expect(overclaimedRanges(ranges, (_s, _p, o) => held.has(o), at([1024, 9216]))).toEqual([]);
    expect(overclaimedRanges(ranges, (_s, _p, o) => held.has(o), at([1024, 5120, 9216]))).toEqual([
      'pipeline-durable:raw/topic/0:[1024,9217) lacks 5120',
    ]);
  });

  it('counts raw offsets below the committed position that raw coverage lacks', () => {
    const held = new Set([0, 1, 2, 3, 4, 5]);
    const holes = rawCoverageHoles(
      [view('pipeline-durable', RAW, [[0, 2]]), view('pipeline-local', RAW, [[4, 6]])],
      (_p, o) => o < 5,
      [new Map([...held].map((o) => [o, o]))],
    );
    expect(holes).toEqual([2]);
    // The sink's own coverage does not count: recovery never reads it.
    const all = [new Map([0, 1, 2, 3, 4, 5].map((o) => [o, o]))];
    expect(
      rawCoverageHoles([view('sink-transactional', RAW, [[0, 6]])], (_p, o) => o < 5, all),
    ).toEqual([5]);
  });

  it('measures the secondary backlog against raw coverage across both pipeline tiers', () => {
    const views = [
      view('pipeline-durable', RAW, [[0, 10]]),
      view('pipeline-local', RAW, [[10, 20]]),
      view('pipeline-durable', PG, [[0, 5]]),
      view('pipeline-local', PG, [[8, 12]]),
      view('sink-transactional', PG, [[0, 20]]),
      view('pipeline-durable', ZEROBUS, [[0, 18]]),
    ];
    // Postgres lacks [5, 8) and [12, 20); Zerobus lacks [18, 20).
    expect(secondaryBacklog(views)).toBe(3 + 8 + 2);
  });

  it('finds the contiguous prefix', () => {
    expect(contiguousPrefix(new Map([[1, 0]]))).toBe(0);
    expect(
      contiguousPrefix(
        new Map([
          [0, 0],
          [1, 0],
          [3, 0],
        ]),
      ),
    ).toBe(2);
  });
});
