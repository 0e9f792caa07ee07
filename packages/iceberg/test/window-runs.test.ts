import {
  Int32,
  Int64,
  Table,
  tableFromArrays,
  vectorFromArray,
  type RecordBatch,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { mergeRuns, windowRuns } from '../src/index.js';

const COLUMNS = { partition: 'p', offset: 'o' };

function batch(p: number[], o: number[]): RecordBatch {
  const t = tableFromArrays({
    p: Int32Array.from(p),
    o: BigInt64Array.from(o.map(BigInt)),
    v: o.map((x) => `v${x}`),
  });
  return t.batches[0]!;
}

const offsetsOf = (batches: Iterable<RecordBatch>): number[] =>
  [...batches].flatMap((b) => [...(b.getChild('o')?.toArray() as BigInt64Array)].map(Number));

describe('window runs', () => {
  it('selects partition == p and start <= offset < end as slices', () => {
    const b = batch([0, 0, 1, 1, 1, 0, 1], [0, 1, 2, 3, 4, 5, 6]);
    const runs = windowRuns(b, 'f', COLUMNS, 1n, 3n, 6n);
    expect(runs.map((r) => [r.begin, r.end])).toEqual([[3, 5]]);
    expect(offsetsOf(mergeRuns(runs))).toEqual([3, 4]);
  });

  it('splits a run where the offset goes down, and merges runs of several files in offset order', () => {
    const a = batch([0, 0, 0, 0, 0], [10, 11, 12, 2, 3]);
    const b = batch([0, 0, 0, 0], [0, 1, 4, 13]);
    const runs = [
      ...windowRuns(a, 'a', COLUMNS, 0n, 0n, 100n),
      ...windowRuns(b, 'b', COLUMNS, 0n, 0n, 100n),
    ];
    expect(runs).toHaveLength(3);
    const out = [...mergeRuns(runs)];
    expect(offsetsOf(out)).toEqual([0, 1, 2, 3, 4, 10, 11, 12, 13]);
    // slices, not rows: [0,1] [2,3] [4] [10..12] [13]
    expect(out.map((x) => x.numRows)).toEqual([2, 2, 1, 3, 1]);
  });

  it('keeps a twice-written offset twice, the earlier file first', () => {
    const a = batch([0, 0], [1, 2]);
    const b = batch([0, 0], [2, 3]);
    const out = [
      ...mergeRuns([
        ...windowRuns(a, 'a', COLUMNS, 0n, 0n, 9n),
        ...windowRuns(b, 'b', COLUMNS, 0n, 0n, 9n),
      ]),
    ];
    expect(offsetsOf(out)).toEqual([1, 2, 2, 3]);
    expect(out.map((x) => x.getChild('v')?.toArray() as string[])).toEqual([
      ['v1', 'v2'],
      ['v2', 'v3'],
    ]);
  });

  it('rows with a null partition or offset belong to no window', () => {
    const t = new Table({
      p: vectorFromArray([0, null, 0, 0], new Int32()),
      o: vectorFromArray([1n, 2n, null, 4n], new Int64()),
    });
    const runs = windowRuns(t.batches[0]!, 'f', COLUMNS, 0n, 0n, 9n);
    expect(runs.map((r) => [r.begin, r.end])).toEqual([
      [0, 1],
      [3, 4],
    ]);
  });

  it('refuses a batch without the column, or with a column that is no int', () => {
    const b = batch([0], [1]);
    expect(() =>
      windowRuns(b, 'f.parquet', { partition: 'p', offset: 'nope' }, 0n, 0n, 1n),
    ).toThrow('TWG_ICEBERG_PARQUET_CORRUPT: f.parquet: has no column "nope"');
    expect(() => windowRuns(b, 'f.parquet', { partition: 'p', offset: 'v' }, 0n, 0n, 1n)).toThrow(
      /column v is (Utf8|Dictionary), not a 32- or 64-bit signed int/,
    );
  });
});
