/**
 * Record headers as one binary value, lossless for every header map a
 * source can deliver as `Record<string, Uint8Array>`:
 *
 * | bytes | field                          |
 * |-------|--------------------------------|
 * | 4     | u32 BE key length in bytes     |
 * | k     | key, UTF-8                     |
 * | 4     | u32 BE value length in bytes   |
 * | v     | value                          |
 *
 * repeated once per header, in the map's own key order; no headers is zero
 * bytes. A length-prefixed binary rather than an Arrow map column because
 * apache-arrow's map support is the least exercised part of its IPC reader,
 * and raw only needs the bytes back, not queries over them.
 *
 * Keys are UTF-8, so a key holding a lone surrogate (which UTF-8 cannot
 * represent) is refused rather than silently rewritten to U+FFFD.
 *
 * The encoder is the packer's (batch-packer.ts), which writes each record's
 * headers straight into the batch it packs.
 */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** The reason a header map cannot be encoded, or null. */
export function headersProblem(headers: unknown): string | null {
  if (typeof headers !== 'object' || headers === null) return 'headers must be an object';
  for (const [key, value] of Object.entries(headers)) {
    if (!(value instanceof Uint8Array)) {
      return `header ${JSON.stringify(key)} is not a Uint8Array`;
    }
    if (LONE_SURROGATE.test(key)) {
      return `header key ${JSON.stringify(key)} holds a lone surrogate, which UTF-8 cannot encode`;
    }
  }
  return null;
}

/**
 * Reads a header map back. Values are views into `bytes`, not copies.
 * Throws a plain Error with the reason on bytes that are not a header map;
 * the caller names the file and offset.
 */
export function readHeaders(bytes: Uint8Array): Record<string, Uint8Array> {
  const entries: [string, Uint8Array][] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pos = 0;
  const length = (what: string): number => {
    if (pos + 4 > bytes.byteLength) throw new Error(`headers end inside a ${what} length`);
    const n = view.getUint32(pos);
    pos += 4;
    if (pos + n > bytes.byteLength) throw new Error(`header ${what} runs past the value`);
    return n;
  };
  const seen = new Set<string>();
  while (pos < bytes.byteLength) {
    const keyLength = length('key');
    const key = decoder.decode(bytes.subarray(pos, pos + keyLength));
    // An object has each key once, so its encoding does too: a repeat is damage.
    if (seen.has(key)) throw new Error(`header ${JSON.stringify(key)} appears twice`);
    seen.add(key);
    pos += keyLength;
    const valueLength = length('value');
    entries.push([key, bytes.subarray(pos, pos + valueLength)]);
    pos += valueLength;
  }
  // fromEntries defines own properties, so a header named "__proto__" comes
  // back as a header, not as the object's prototype.
  return Object.fromEntries(entries);
}
