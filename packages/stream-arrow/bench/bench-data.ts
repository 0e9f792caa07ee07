/**
 * One million rows of five columns (int64, utf8, float64, timestamp in
 * microseconds, binary), deterministic. Everything is generated up front:
 * about 400 MB of heap, well within the 24 GiB machine.
 */
export interface BenchColumns {
  readonly id: bigint[];
  readonly name: (string | null)[];
  readonly score: number[];
  readonly ts: bigint[];
  readonly payload: Uint8Array[];
}

export function benchColumns(rows: number): BenchColumns {
  const id = new Array<bigint>(rows);
  const name = new Array<string | null>(rows);
  const score = new Array<number>(rows);
  const ts = new Array<bigint>(rows);
  const payload = new Array<Uint8Array>(rows);
  const base = 1_700_000_000_000_000;
  for (let i = 0; i < rows; i++) {
    // Beyond 2^53, where a number would round.
    id[i] = 9_007_199_254_740_993n + BigInt(i * 7);
    // Mostly ASCII, one in twenty with a non-ASCII character, one in fifty null.
    name[i] =
      i % 50 === 7 ? null : i % 20 === 3 ? `usér-${i % 10_007}-${i}` : `user-${i % 10_007}-${i}`;
    score[i] = (i % 100_000) / 8;
    ts[i] = BigInt(base + i * 1000);
    const p = new Uint8Array(16 + (i % 32));
    p[0] = i & 0xff;
    p[p.length - 1] = (i >> 8) & 0xff;
    payload[i] = p;
  }
  return { id, name, score, ts, payload };
}

export function benchRows(columns: BenchColumns): Record<string, unknown>[] {
  const rows = new Array<Record<string, unknown>>(columns.id.length);
  for (let i = 0; i < rows.length; i++) {
    rows[i] = {
      id: columns.id[i],
      name: columns.name[i],
      score: columns.score[i],
      ts: columns.ts[i],
      payload: columns.payload[i],
    };
  }
  return rows;
}
