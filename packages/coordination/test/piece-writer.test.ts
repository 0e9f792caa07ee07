import type { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { PieceWriter, WRITE_RETRY_MS, type PieceWrite } from '../src/etcd/piece-writer.js';
import { ReusedLease } from '../src/etcd/reused-lease.js';

/** An etcd client whose puts fail the first `failures` times, then give revisions 1, 2, … */
function flakyClient(failures: number): { client: Etcd3; puts: string[] } {
  const puts: string[] = [];
  let revision = 0;
  const client = {
    put: (key: string) => ({
      value: () => ({
        lease: () => ({
          exec: async () => {
            puts.push(key);
            if (puts.length <= failures) throw new Error('etcdserver: leader changed');
            revision += 1;
            return { header: { revision: String(revision) } };
          },
        }),
      }),
    }),
  } as unknown as Etcd3;
  return { client, puts };
}

function harness(failures: number) {
  const { client, puts } = flakyClient(failures);
  const confirmed: number[] = [];
  const unwritten: string[] = [];
  const waited: number[] = [];
  const writer = new PieceWriter(
    client,
    new ReusedLease(
      async () => 'lease-1',
      () => 0,
    ),
    { confirmed: (_w, revision) => confirmed.push(revision), failed: () => undefined },
    async (ms) => {
      waited.push(ms);
    },
  );
  const piece = (index: number): PieceWrite => ({
    index,
    key: `set/p${index}`,
    value: new Uint8Array([index]),
    count: 1,
    ttlMs: 60_000,
    told: (_keys, error) => unwritten.push(error.message),
  });
  return { writer, piece, puts, confirmed, unwritten, waited };
}

describe('PieceWriter', () => {
  it('tries a failed put again, so a cluster that just regained its quorum loses no claim', async () => {
    const h = harness(2);
    h.writer.write(h.piece(0));
    h.writer.write(h.piece(1));
    await h.writer.flushed();
    expect(h.puts).toEqual(['set/p0', 'set/p0', 'set/p0', 'set/p1']);
    expect(h.waited).toEqual(WRITE_RETRY_MS.slice(0, 2));
    expect(h.confirmed).toEqual([1, 2]);
    expect(h.unwritten).toEqual([]);
  });

  it('tells a write unwritten once every try failed, and goes on with the next in order', async () => {
    const h = harness(1 + WRITE_RETRY_MS.length);
    h.writer.write(h.piece(0));
    h.writer.write(h.piece(1));
    await h.writer.flushed();
    expect(h.puts).toHaveLength(2 + WRITE_RETRY_MS.length);
    expect(h.unwritten).toEqual([
      'TWG_COORDINATION_UNAVAILABLE: etcd: writing 1 keys of set/p0 failed',
    ]);
    expect(h.confirmed).toEqual([1]);
  });
});
