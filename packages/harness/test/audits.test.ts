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
      ends: [4],
      producedIds: produced,
      raw: raw([0, 1, 2, 3], 7),
      rows: [0, 1, 2, 3].map((o) => row(o)),
    });
    expect(audit).toEqual({
      missingRaw: 0,
      missingSecondary: 0,
      duplicateRows: 0,
      idMismatches: 0,
      rawDuplicates: 3,
    });
  });

  it('counts a hole in raw and in the table', () => {
    const audit = auditFinal({
      ends: [4],
      producedIds: produced,
      raw: raw([0, 1, 3]),
      rows: [row(0), row(3)],
    });
    expect(audit.missingRaw).toBe(1);
    expect(audit.missingSecondary).toBe(2);
  });

  it('counts a produced record stored at the wrong offset as missing by id', () => {
    const audit = auditFinal({
      ends: [2],
      producedIds: ['p0', 'p1', 'p2'],
      raw: raw([0, 1]),
      rows: [row(0), row(1)],
    });
    expect(audit.missingRaw).toBe(1);
    expect(audit.missingSecondary).toBe(1);
  });

  it('counts two record ids for one position and ids that differ from raw', () => {
    const audit = auditFinal({
      ends: [2],
      producedIds: ['p0', 'p1'],
      raw: raw([0, 1]),
      rows: [row(0), row(0, 'other'), row(1, 'r1', 'p9')],
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

  it('counts raw offsets below the committed position that raw coverage lacks', () => {
    const held = new Set([0, 1, 2, 3, 4, 5]);
    const holes = rawCoverageHoles(
      [view('pipeline-durable', RAW, [[0, 2]]), view('pipeline-local', RAW, [[4, 6]])],
      [5],
      (_p, o) => held.has(o),
    );
    expect(holes).toEqual([2]);
    // The sink's own coverage does not count: recovery never reads it.
    expect(rawCoverageHoles([view('sink-transactional', RAW, [[0, 6]])], [5], () => true)).toEqual([
      5,
    ]);
  });

  it('measures the secondary backlog against raw coverage across both pipeline tiers', () => {
    const views = [
      view('pipeline-durable', RAW, [[0, 10]]),
      view('pipeline-local', RAW, [[10, 20]]),
      view('pipeline-durable', PG, [[0, 5]]),
      view('pipeline-local', PG, [[8, 12]]),
      view('sink-transactional', PG, [[0, 20]]),
    ];
    expect(secondaryBacklog(views)).toBe(3 + 8);
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
