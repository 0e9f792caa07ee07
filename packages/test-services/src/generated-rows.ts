/**
 * The rows the Flight peer and the IPC producer generate
 * (scripts/services/flight/generated_rows.py), as a test derives them from
 * their ids: row `id` holds the payload `payloadOf(id)` and is stamped
 * `BASE_TS_MS + id` milliseconds.
 */
export const BASE_TS_MS = 1_700_000_000_000;

/** `row-<id>`, or that text repeated and cut to `payloadBytes` (generated_rows.payload_of). */
export function payloadOf(id: number, payloadBytes = 0): string {
  const text = `row-${id}`;
  if (payloadBytes <= 0) return text;
  return `${text};`.repeat(Math.floor(payloadBytes / (text.length + 1)) + 1).slice(0, payloadBytes);
}
