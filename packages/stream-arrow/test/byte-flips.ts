import fc from 'fast-check';

/** Up to `maxFlips` corruptions of a `length`-byte input: (position, non-zero XOR mask). */
export function byteFlips(length: number, maxFlips: number): fc.Arbitrary<[number, number][]> {
  return fc.array(fc.tuple(fc.nat(length - 1), fc.integer({ min: 1, max: 255 })), {
    minLength: 1,
    maxLength: maxFlips,
  });
}

/** A copy of `bytes` with every flip applied. */
export function flipped(bytes: Uint8Array, flips: readonly [number, number][]): Buffer {
  const corrupted = Buffer.from(bytes);
  for (const [at, mask] of flips) corrupted[at]! ^= mask;
  return corrupted;
}
