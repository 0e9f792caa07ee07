// Avro binary encoding built by hand, independently of the decoder under
// test: each helper writes one value as the spec's "Binary Encoding" says,
// and `container` frames blocks as an object container file.
import { deflateRawSync } from 'node:zlib';

export function concat(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A zigzag varint (int and long are encoded alike). */
export function long(v: number | bigint): Uint8Array {
  let n = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n));
  const out: number[] = [];
  do {
    const b = Number(n & 0x7fn);
    n >>= 7n;
    out.push(n === 0n ? b : b | 0x80);
  } while (n !== 0n);
  return Uint8Array.from(out);
}

export const int = long;

export function bytes(b: Uint8Array): Uint8Array {
  return concat(long(b.length), b);
}

export function str(s: string): Uint8Array {
  return bytes(new TextEncoder().encode(s));
}

export function boolean(v: boolean): Uint8Array {
  return Uint8Array.of(v ? 1 : 0);
}

export function double(v: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setFloat64(0, v, true);
  return out;
}

export function float(v: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setFloat32(0, v, true);
  return out;
}

/** An array or map as one block of items then the zero count. */
export function block(items: readonly Uint8Array[]): Uint8Array {
  return items.length === 0 ? long(0) : concat(long(items.length), ...items, long(0));
}

/** A union value: the branch index then the value. */
export function union(branch: number, value: Uint8Array = new Uint8Array()): Uint8Array {
  return concat(long(branch), value);
}

export const SYNC = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);

/** An object container file: header (magic, metadata, sync), then each block of `count` records. */
export function container(options: {
  schema: unknown;
  codec?: string;
  blocks: readonly { count: number; data: Uint8Array }[];
  sync?: Uint8Array;
  blockSync?: (i: number) => Uint8Array;
}): Uint8Array {
  const codec = options.codec ?? 'null';
  const meta = block([
    concat(str('avro.schema'), str(JSON.stringify(options.schema))),
    concat(str('avro.codec'), str(codec)),
  ]);
  const sync = options.sync ?? SYNC;
  const parts = [Uint8Array.of(0x4f, 0x62, 0x6a, 0x01), meta, sync];
  options.blocks.forEach((b, i) => {
    const data = codec === 'deflate' ? new Uint8Array(deflateRawSync(b.data)) : b.data;
    parts.push(long(b.count), long(data.length), data, options.blockSync?.(i) ?? sync);
  });
  return concat(...parts);
}
