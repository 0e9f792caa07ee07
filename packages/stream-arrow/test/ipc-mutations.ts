import { Random } from './arrow-random.js';

/**
 * Corruptions of valid IPC for the fuzz tests, from a seeded PRNG: byte
 * flips, truncations, and edits of length fields (an aligned i32 or i64
 * overwritten with a boundary value: 0, -1, the largest, just past the
 * input, a random size), which is where an unchecked length would drive an
 * allocation or a read.
 */
export function mutate(r: Random, bytes: Uint8Array): Uint8Array {
  const out = Uint8Array.from(bytes);
  const view = new DataView(out.buffer);
  switch (r.int(0, 3)) {
    case 0: {
      for (let n = r.int(1, 4); n > 0; n--) {
        const at = r.int(0, out.byteLength - 1);
        out[at] = (out[at] ?? 0) ^ r.int(1, 255);
      }
      return out;
    }
    case 1:
      return out.subarray(0, r.int(0, out.byteLength - 1));
    default: {
      const wide = r.next() < 0.4;
      const width = wide ? 8 : 4;
      const at = Math.min(r.int(0, out.byteLength >> 2) * 4, out.byteLength - width);
      if (at < 0) return out;
      const value = r.pick([
        0,
        -1,
        0x7fffffff,
        out.byteLength + 1,
        r.int(1, 1 << 30),
        -r.int(2, 1000),
      ]);
      if (wide) view.setBigInt64(at, BigInt(value), true);
      else view.setInt32(at, value, true);
      return out;
    }
  }
}

const WATCHED = [
  'ArrayBuffer',
  'Uint8Array',
  'Int8Array',
  'Uint16Array',
  'Int16Array',
  'Uint32Array',
  'Int32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;

/**
 * Runs `run` with every typed array and ArrayBuffer constructor of the
 * global scope watched, and returns the largest byte size any of them was
 * asked to allocate by a length: what shows an allocation driven by a
 * length the reader did not check against its input. (The constructors are
 * proxied, not replaced: `instanceof` and the static methods still work.)
 */
export function largestAllocation(run: () => void): number {
  const g = globalThis as unknown as Record<string, unknown>;
  const saved = WATCHED.map((name) => g[name]);
  let largest = 0;
  WATCHED.forEach((name, i) => {
    const ctor = saved[i] as { BYTES_PER_ELEMENT?: number } & (new (...a: unknown[]) => object);
    const size = ctor.BYTES_PER_ELEMENT ?? 1;
    g[name] = new Proxy(ctor, {
      construct(target, args: unknown[], newTarget: (new (...a: unknown[]) => object) & object) {
        if (typeof args[0] === 'number') largest = Math.max(largest, args[0] * size);
        return Reflect.construct<unknown[], object>(target, args, newTarget);
      },
    });
  });
  try {
    run();
  } finally {
    WATCHED.forEach((name, i) => (g[name] = saved[i]));
  }
  return largest;
}
