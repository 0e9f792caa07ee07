import { invalidLeaseInput } from './lease-errors.js';
import type { Lease } from './lease-store.js';

/**
 * Bounds of what a lease store accepts. A key is at most 256 UTF-8 bytes so
 * that, percent-encoded (at most 3 characters per byte) under an S3 prefix,
 * it stays within S3's 1024-byte object key limit.
 */
export const MAX_LEASE_KEY_BYTES = 256;
export const MAX_LEASE_HOLDER_BYTES = 256;
/** A day: a longer lease would park a window for longer than any recovery run should take. */
export const MAX_LEASE_TTL_MS = 86_400_000;

const encoder = new TextEncoder();

/**
 * A non-empty, well-formed string without NUL within `maxBytes`. NUL is
 * refused because PostgreSQL text cannot hold it; lone surrogates because
 * they have no UTF-8 form (S3 keys, JSON round trips).
 */
function checkText(value: unknown, field: string, maxBytes: number, allowEmpty: boolean): void {
  if (typeof value !== 'string') throw invalidLeaseInput(field, 'must be a string');
  if (!allowEmpty && value.length === 0) throw invalidLeaseInput(field, 'must not be empty');
  if (value.includes('\u0000')) throw invalidLeaseInput(field, 'must not contain NUL');
  if (/\p{Cs}/u.test(value)) throw invalidLeaseInput(field, 'contains a lone UTF-16 surrogate');
  const bytes = encoder.encode(value).length;
  if (bytes > maxBytes) {
    throw invalidLeaseInput(field, `is ${bytes} UTF-8 bytes; at most ${maxBytes} are allowed`);
  }
}

export function checkKey(key: unknown, field = 'key'): asserts key is string {
  checkText(key, field, MAX_LEASE_KEY_BYTES, false);
}

/** A key prefix; empty selects every key. */
export function checkPrefix(prefix: unknown): asserts prefix is string {
  checkText(prefix, 'prefix', MAX_LEASE_KEY_BYTES, true);
}

export function checkHolder(holder: unknown, field = 'holder'): asserts holder is string {
  checkText(holder, field, MAX_LEASE_HOLDER_BYTES, false);
}

export function checkTtl(ttlMs: unknown, field = 'ttlMs'): asserts ttlMs is number {
  if (
    typeof ttlMs !== 'number' ||
    !Number.isSafeInteger(ttlMs) ||
    ttlMs <= 0 ||
    ttlMs > MAX_LEASE_TTL_MS
  ) {
    throw invalidLeaseInput(
      field,
      `${String(ttlMs)} is not a whole number of milliseconds in [1, ${MAX_LEASE_TTL_MS}]`,
    );
  }
}

/** A lease handed back to renew/complete/release: only key, holder and token decide. */
export function checkLease(lease: unknown): asserts lease is Lease {
  if (typeof lease !== 'object' || lease === null)
    throw invalidLeaseInput('lease', 'is not a lease');
  const l = lease as Record<string, unknown>;
  checkKey(l['key'], 'lease.key');
  checkHolder(l['holder'], 'lease.holder');
  const token = l['token'];
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token <= 0) {
    throw invalidLeaseInput('lease.token', `${String(token)} is not a positive safe integer`);
  }
}
