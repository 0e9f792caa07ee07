import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  column,
  encodeIpcStream,
  type Row,
} from '../src/index.js';
import { ScratchMemory } from '../src/column-memory.js';
import { every, rows } from './every-column.js';

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

const withIds = BatchSchema.define({
  fields: [
    { name: 'name', type: column.utf8, nullable: true },
    { name: 'n', type: column.int64, nullable: false },
  ],
  recordId: 'hex',
});

/** `count` rows of `withIds`, every third name null, with their provenance. */
function identified(count: number, from = 0) {
  const batch: Row[] = [];
  const payloads: Uint8Array[] = [];
  const offsets: number[] = [];
  for (let i = 0; i < count; i++) {
    const o = from + i;
    batch.push({ name: o % 3 === 0 ? null : `name-${o}-${'é'.repeat(o % 5)}`, n: o });
    payloads.push(Buffer.from(`{"o":${o}}`));
    offsets.push(o);
  }
  const provenance = { cluster: 'c', topic: 't', partition: 2, offsets, payloads };
  return { batch, provenance };
}

describe('BatchBuilder.encodeRows and encodeColumns', () => {
  it('encode exactly what encodeIpcStream of fromRows and fromColumns does', () => {
    const builder = new BatchBuilder(every);
    expect(same(builder.encodeRows(rows), encodeIpcStream(builder.fromRows(rows)))).toBe(true);
    const columns = Object.fromEntries(
      every.fields.map((f) => [f.name, rows.map((r) => r[f.name])]),
    );
    expect(
      same(builder.encodeColumns(columns), encodeIpcStream(builder.fromColumns(columns))),
    ).toBe(true);
    // Typed arrays of the columns' storage are copied in, as fromColumns copies them.
    const typed = new BatchBuilder(
      BatchSchema.define({
        fields: [
          { name: 'a', type: column.int64, nullable: false },
          { name: 'b', type: column.int32, nullable: false },
          { name: 'c', type: column.float64, nullable: false },
          { name: 'd', type: column.timestamp('us'), nullable: false },
        ],
      }),
    );
    const arrays = {
      a: BigInt64Array.from([1n, -2n, 3n]),
      b: Int32Array.from([4, 5, -6]),
      c: Float64Array.from([0.5, -0, Number.NaN]),
      d: BigInt64Array.from([7n, 8n, 9n]),
    };
    expect(same(typed.encodeColumns(arrays), encodeIpcStream(typed.fromColumns(arrays)))).toBe(
      true,
    );
  });

  it('leaves nothing of one batch in the next: a large one, then smaller ones with nulls', () => {
    const builder = new BatchBuilder(withIds);
    const fresh = new BatchBuilder(withIds);
    for (const [count, from] of [
      [5000, 0],
      [7, 100],
      [3000, 9],
      [1, 0],
      [6000, 42],
    ] as const) {
      const { batch, provenance } = identified(count, from);
      const encoded = builder.encodeRows(batch, provenance);
      expect(same(encoded, encodeIpcStream(fresh.fromRows(batch, provenance))), `${count}`).toBe(
        true,
      );
    }
  });

  it('refuses a bad value as fromRows does, and encodes the next batch whole', () => {
    const builder = new BatchBuilder(withIds);
    const { batch, provenance } = identified(50);
    const bad = batch.map((r, i) => (i === 17 ? { ...r, n: 'seventeen' } : r));
    const error = (() => {
      try {
        builder.encodeRows(bad, provenance);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ArrowBatchError);
    expect(error).toMatchObject({ field: 'n', row: 17 });
    expect(
      same(
        builder.encodeRows(batch, provenance),
        encodeIpcStream(builder.fromRows(batch, provenance)),
      ),
    ).toBe(true);
  });
});

describe('ScratchMemory', () => {
  it('hands out zeroed views of one arena, sized after the first build', () => {
    const memory = new ScratchMemory();
    memory.reset();
    memory.int32(10).fill(7);
    memory.bytes(3).fill(9);
    // The first build ran beyond the (empty) arena; the next one fits in it.
    memory.reset();
    expect(memory.arenaBytes).toBeGreaterThanOrEqual(40 + 3);
    const again = memory.int32(10);
    expect([...again]).toEqual(new Array(10).fill(0));
    expect(again.buffer.byteLength).toBe(memory.arenaBytes);
    // 8-byte aligned regions: a BigInt64Array after 3 bytes.
    memory.bytes(3);
    expect(memory.bigInt64(2).byteOffset % 8).toBe(0);
  });

  it('keeps a growable buffer as the view it is, where fresh memory copies it', () => {
    const memory = new ScratchMemory();
    memory.reset();
    const buffer = memory.growable(16);
    buffer.write('abc');
    const kept = memory.keep(buffer, 3);
    expect(kept.buffer).toBe(buffer.buffer);
    expect(Buffer.from(kept).toString()).toBe('abc');
  });
});
