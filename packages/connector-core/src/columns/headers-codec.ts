import type { SourceHeader, SourceHeaders } from '../source-headers.js';

/**
 * A record's headers, and whether it is a tombstone, as one binary value:
 *
 * | bytes | field                                                        |
 * |-------|--------------------------------------------------------------|
 * | 4     | `NULL_LENGTH` once, first, when the record is a tombstone     |
 * | 4     | u32 BE name length in bytes                                  |
 * | k     | name, UTF-8                                                  |
 * | 4     | u32 BE value length in bytes, `NULL_LENGTH` for a null value |
 * | v     | value                                                        |
 *
 * the last four repeated once per header, in the source's order, a repeated
 * name as often as it came; a record with no headers that is no tombstone is
 * zero bytes. `NULL_LENGTH` (2^32 - 1, Kafka's own -1) can never be a real
 * length: a binary column holds under 2^31 bytes. Segments written before
 * tombstones and null header values were kept therefore read back as they
 * were written.
 *
 * A length-prefixed binary rather than an Arrow map column because
 * apache-arrow's map support is the least exercised part of its IPC reader,
 * and raw only needs the bytes back, not queries over them.
 *
 * Names are UTF-8, so a name holding a lone surrogate (which UTF-8 cannot
 * represent) is refused rather than silently rewritten to U+FFFD.
 *
 * Raw segments encode with their packer (sink-files batch-packer.ts), which
 * writes each record's headers straight into the batch it packs; a raw held
 * as table rows (raw-table-rows.ts) encodes one record at a time with
 * `encodeHeaders`.
 */
export const NULL_LENGTH = 0xffffffff;

const LONE_SURROGATE = /\p{Surrogate}/u;

/** The reason a header list cannot be encoded, or null. */
export function headersProblem(headers: unknown): string | null {
  if (!Array.isArray(headers)) return 'headers must be an array of [name, value] pairs';
  const list = headers as readonly unknown[];
  for (let i = 0; i < list.length; i++) {
    const entry = list[i];
    if (!Array.isArray(entry) || entry.length !== 2) {
      return `header ${i} is not a [name, value] pair`;
    }
    const [name, value] = entry as readonly unknown[];
    if (typeof name !== 'string') return `header ${i}: its name is not a string`;
    if (value !== null && !(value instanceof Uint8Array)) {
      return `header ${i} (${JSON.stringify(name)}): its value is not a Uint8Array or null`;
    }
    if (LONE_SURROGATE.test(name)) {
      return `header ${i}: name ${JSON.stringify(name)} holds a lone surrogate, which UTF-8 cannot encode`;
    }
  }
  return null;
}

const utf8 = new TextEncoder();
/** Stateless between calls (no `stream` option), so one serves every read. */
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * One record's headers (and tombstone mark) in this encoding. Check them
 * with `headersProblem` first: this throws a plain Error on input it cannot
 * encode, and the caller names the record.
 */
export function encodeHeaders(headers: SourceHeaders, tombstone: boolean): Uint8Array {
  if (headers.length === 0 && !tombstone) return new Uint8Array(0);
  const problem = headersProblem(headers);
  if (problem !== null) throw new Error(problem);
  const names = headers.map(([name]) => utf8.encode(name));
  let bytes = tombstone ? 4 : 0;
  for (const [i, [, value]] of headers.entries())
    bytes += 8 + (names[i]?.byteLength ?? 0) + (value?.byteLength ?? 0);
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  let pos = 0;
  if (tombstone) {
    view.setUint32(0, NULL_LENGTH);
    pos = 4;
  }
  for (const [i, [, value]] of headers.entries()) {
    const name = names[i] ?? new Uint8Array(0);
    view.setUint32(pos, name.byteLength);
    out.set(name, pos + 4);
    pos += 4 + name.byteLength;
    view.setUint32(pos, value === null ? NULL_LENGTH : value.byteLength);
    pos += 4;
    if (value !== null) {
      out.set(value, pos);
      pos += value.byteLength;
    }
  }
  return out;
}

export interface DecodedHeaders {
  readonly headers: SourceHeaders;
  readonly tombstone: boolean;
}

/**
 * Reads headers back. Values are views into `bytes`, not copies.
 * Throws a plain Error with the reason on bytes that are not a header list;
 * the caller names the file and offset.
 */
export function readHeaders(bytes: Uint8Array): DecodedHeaders {
  const headers: SourceHeader[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const length = (what: string, nullable: boolean): number | null => {
    if (pos + 4 > bytes.byteLength) throw new Error(`headers end inside a ${what} length`);
    const n = view.getUint32(pos);
    pos += 4;
    if (n === NULL_LENGTH && nullable) return null;
    if (pos + n > bytes.byteLength) throw new Error(`header ${what} runs past the value`);
    return n;
  };
  let tombstone = false;
  if (bytes.byteLength >= 4 && view.getUint32(0) === NULL_LENGTH) {
    tombstone = true;
    pos = 4;
  }
  while (pos < bytes.byteLength) {
    const nameLength = length('name', false) ?? 0;
    const name = decoder.decode(bytes.subarray(pos, pos + nameLength));
    pos += nameLength;
    const valueLength = length('value', true);
    if (valueLength === null) {
      headers.push([name, null]);
    } else {
      headers.push([name, bytes.subarray(pos, pos + valueLength)]);
      pos += valueLength;
    }
  }
  return { headers, tombstone };
}
