/**
 * A record's headers as the source delivered them: an ordered list of
 * `[name, value]` pairs, not a map. Kafka headers are a list in which a name
 * may repeat and whose order a producer may rely on; a list keeps both, and a
 * name never becomes a property key, so no header (`__proto__`,
 * `constructor`, `toString`) can reach an object's prototype or be shadowed
 * by one. A null value is a header the producer sent without a value, kept
 * apart from an empty one.
 */
export type SourceHeader = readonly [name: string, value: Uint8Array | null];

export type SourceHeaders = readonly SourceHeader[];

/** The empty header list, shared (frozen). */
export const NO_HEADERS: SourceHeaders = Object.freeze([]);

/**
 * The value of the first header called `name`, `null` when that header has
 * no value, `undefined` when there is none. Kafka's own clients read headers
 * the same way (`lastHeader` in Java reads from the other end).
 */
export function headerValue(headers: SourceHeaders, name: string): Uint8Array | null | undefined {
  for (const [n, v] of headers) if (n === name) return v;
  return undefined;
}

/** Bytes a header list holds: names as UTF-16 code units (an estimate), values exactly. */
export function headersSize(headers: SourceHeaders): number {
  let bytes = 0;
  for (const [name, value] of headers) bytes += name.length + (value?.byteLength ?? 0);
  return bytes;
}
