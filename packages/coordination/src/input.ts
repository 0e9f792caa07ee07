import {
  MAX_LEASE_HOLDER_BYTES,
  MAX_LEASE_KEY_BYTES,
  MAX_LEASE_TTL_MS,
} from '@thalweg/offset-store';
import { invalidInput } from './errors.js';

/**
 * Bounds of what every mode accepts, the offset store's lease bounds, so a
 * caller moving between mode 0 and the others meets the same refusals.
 */
export function checkName(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidInput(field, 'must be a non-empty string');
  }
  if (value.includes('\u0000')) throw invalidInput(field, 'must not contain NUL');
  const max =
    field === 'holder' || field === 'candidate' ? MAX_LEASE_HOLDER_BYTES : MAX_LEASE_KEY_BYTES;
  if (Buffer.byteLength(value) > max) throw invalidInput(field, `is over ${max} UTF-8 bytes`);
}

export function checkTtl(ttlMs: unknown, field = 'ttlMs'): asserts ttlMs is number {
  if (
    typeof ttlMs !== 'number' ||
    !Number.isSafeInteger(ttlMs) ||
    ttlMs <= 0 ||
    ttlMs > MAX_LEASE_TTL_MS
  ) {
    throw invalidInput(
      field,
      `${String(ttlMs)} is not a whole number of milliseconds in [1, ${MAX_LEASE_TTL_MS}]`,
    );
  }
}

export function checkKeys(keys: unknown): asserts keys is readonly string[] {
  if (!Array.isArray(keys)) throw invalidInput('keys', 'must be an array of strings');
  keys.forEach((k, i) => checkName(k, `keys[${i}]`));
}

export function checkDelta(delta: unknown): asserts delta is number {
  if (typeof delta !== 'number' || !Number.isSafeInteger(delta)) {
    throw invalidInput('delta', `${String(delta)} is not a safe integer`);
  }
}

/** Values of an `addMany`, when given: one string per key. */
export function checkValues(
  keys: readonly string[],
  values: unknown,
): asserts values is readonly string[] | undefined {
  if (values === undefined) return;
  if (!Array.isArray(values) || values.length !== keys.length) {
    throw invalidInput('values', `must be an array of ${keys.length} strings, one per key`);
  }
  values.forEach((v, i) => {
    if (typeof v !== 'string') throw invalidInput(`values[${i}]`, 'must be a string');
  });
}
