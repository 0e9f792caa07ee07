import { describe, expect, it } from 'vitest';
import { decodeIntegerBound, mayOverlap } from '../src/index.js';

function le(bytes: number, v: bigint): Uint8Array {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  if (bytes === 8) view.setBigInt64(0, v, true);
  else view.setInt32(0, Number(v), true);
  return out;
}

describe('column bounds', () => {
  it('decodes int (4 bytes) and long (8 bytes) little-endian, signed', () => {
    expect(decodeIntegerBound(le(4, -7n), 'int', 'f')).toBe(-7n);
    expect(decodeIntegerBound(le(8, 2n ** 62n + 3n), 'long', 'f')).toBe(2n ** 62n + 3n);
    expect(decodeIntegerBound(le(8, -(2n ** 63n)), 'long', 'f')).toBe(-(2n ** 63n));
    expect(decodeIntegerBound(le(4, 12n), 'long', 'f')).toBe(12n); // an int promoted to long
  });

  it('refuses a bound of the wrong length, naming it', () => {
    expect(() =>
      decodeIntegerBound(new Uint8Array(3), 'long', 'data/f.parquet (bound of offset)'),
    ).toThrow('data/f.parquet (bound of offset): a long bound of 3 bytes');
    expect(() => decodeIntegerBound(new Uint8Array(8), 'int', 'x')).toThrow(
      'an int bound of 8 bytes',
    );
  });

  it('prunes only a file that provably holds nothing in [lo, hi)', () => {
    expect(mayOverlap(0n, 9n, 10n, 20n)).toBe(false); // all below
    expect(mayOverlap(20n, 30n, 10n, 20n)).toBe(false); // starts at the exclusive end
    expect(mayOverlap(19n, 30n, 10n, 20n)).toBe(true);
    expect(mayOverlap(0n, 10n, 10n, 20n)).toBe(true); // ends at the inclusive start
    expect(mayOverlap(undefined, undefined, 10n, 20n)).toBe(true);
    expect(mayOverlap(undefined, 5n, 10n, 20n)).toBe(false);
  });
});
