import { ZerobusSinkError } from '../errors.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The SDK numbers batches with i64 bigints; offsets here are safe integers
 * (ADR 0004). An offset beyond 2^53 - 1 is refused rather than rounded: a
 * rounded offset would make a cumulative wait cover batches it does not.
 * The refusal poisons the stream, whose replacement numbers from 0 again.
 */
export function offsetFromSdk(raw: unknown, table: string): number {
  if (typeof raw === 'bigint' && raw >= 0n && raw <= MAX_SAFE) return Number(raw);
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) return raw;
  throw new ZerobusSinkError(
    'poison-stream',
    `the SDK returned offset ${String(raw)} for ${table}: not a safe non-negative integer (at most 2^53 - 1); the stream is replaced`,
  );
}

/** Our offset as the bigint `waitForOffset` requires (a number is refused by the binding). */
export function offsetToSdk(offset: number): bigint {
  return BigInt(offset);
}
