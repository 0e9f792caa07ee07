import type { Lease, LeaseState } from './lease-store.js';

/** What a backend stores per key: a released key keeps its row so its token history stays. */
export type StoredLeaseState = 'held' | 'released' | 'complete';

export interface LeaseRecord {
  readonly holder: string;
  readonly token: number;
  readonly expiresAt: number;
  readonly state: StoredLeaseState;
  /** Set exactly when `state` is complete. */
  readonly completedAt: number | null;
}

/**
 * The public state of a stored record (null: nothing stored). `expired` is
 * decided by the caller on the backend's clock: the database's, or the
 * process clock less the skew margin.
 */
export function leaseStateOf(
  key: string,
  record: LeaseRecord | null,
  expired: boolean,
): LeaseState {
  if (record === null || record.state === 'released') return { kind: 'free' };
  if (record.state === 'complete') {
    return { kind: 'complete', holder: record.holder, completedAt: record.completedAt ?? 0 };
  }
  const lease: Lease = {
    key,
    holder: record.holder,
    token: record.token,
    expiresAt: record.expiresAt,
  };
  return expired ? { kind: 'expired', lease } : { kind: 'held', lease };
}

/** Whether `lease` is the one `record` holds (same holder, same claim). */
export function holds(record: LeaseRecord | null, lease: Lease): record is LeaseRecord {
  return record !== null && record.holder === lease.holder && record.token === lease.token;
}

/**
 * Key order of `list`: UTF-8 byte order (code point order), which is what
 * PostgreSQL's "C" collation gives, so every backend lists in the same order.
 */
export function compareLeaseKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
