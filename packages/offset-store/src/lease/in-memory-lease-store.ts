import { LeaseBackend } from './lease-backend.js';
import { parseInMemoryLeaseOptions } from './lease-options.js';
import { compareLeaseKeys, holds, leaseStateOf, type LeaseRecord } from './lease-record.js';
import type { Lease, LeaseState } from './lease-store.js';

export interface InMemoryLeaseStoreOptions {
  /** Milliseconds since the epoch; injectable so tests move time by hand. */
  readonly now?: () => number;
}

/**
 * Leases in process memory: for unit tests, and for single-process recovery
 * where workers are tasks of one process. Every operation runs to completion
 * without awaiting, so operations are atomic with respect to each other.
 * Tokens come from one store-wide counter, so they keep increasing even for
 * a key forgotten by `clearCompleted` and claimed again.
 */
export class InMemoryLeaseStore extends LeaseBackend {
  private readonly records = new Map<string, LeaseRecord>();
  private readonly now: () => number;
  private lastToken = 0;

  constructor(options: InMemoryLeaseStoreOptions = {}) {
    super();
    this.now = parseInMemoryLeaseOptions(options).now;
  }

  protected async claimChecked(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    const current = this.records.get(key) ?? null;
    const now = this.now();
    if (current !== null) {
      if (current.state === 'complete') return null;
      if (current.state === 'held' && now < current.expiresAt) return null;
    }
    const token = ++this.lastToken;
    const expiresAt = now + ttlMs;
    this.records.set(key, { holder, token, expiresAt, state: 'held', completedAt: null });
    return { key, holder, token, expiresAt };
  }

  protected async renewChecked(lease: Lease, ttlMs: number): Promise<Lease | null> {
    const current = this.records.get(lease.key) ?? null;
    if (!holds(current, lease) || current.state !== 'held') return null;
    const expiresAt = this.now() + ttlMs;
    this.records.set(lease.key, { ...current, expiresAt });
    return { key: lease.key, holder: lease.holder, token: lease.token, expiresAt };
  }

  protected async completeChecked(lease: Lease): Promise<boolean> {
    const current = this.records.get(lease.key) ?? null;
    if (!holds(current, lease) || current.state === 'released') return false;
    if (current.state === 'held') {
      this.records.set(lease.key, { ...current, state: 'complete', completedAt: this.now() });
    }
    return true;
  }

  protected async releaseChecked(lease: Lease): Promise<void> {
    const current = this.records.get(lease.key) ?? null;
    if (!holds(current, lease) || current.state !== 'held') return;
    this.records.set(lease.key, { ...current, state: 'released', expiresAt: this.now() });
  }

  protected async stateChecked(key: string): Promise<LeaseState> {
    return this.describe(key, this.records.get(key) ?? null);
  }

  protected async listChecked(prefix: string): Promise<{ key: string; state: LeaseState }[]> {
    return [...this.records.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .sort(([a], [b]) => compareLeaseKeys(a, b))
      .map(([key, record]) => ({ key, state: this.describe(key, record) }));
  }

  protected async clearChecked(prefix: string): Promise<number> {
    let cleared = 0;
    for (const [key, record] of this.records) {
      if (record.state === 'complete' && key.startsWith(prefix)) {
        this.records.delete(key);
        cleared += 1;
      }
    }
    return cleared;
  }

  protected async dispose(): Promise<void> {
    this.records.clear();
  }

  private describe(key: string, record: LeaseRecord | null): LeaseState {
    return leaseStateOf(key, record, record !== null && this.now() >= record.expiresAt);
  }
}
