import { LeaseError } from './lease-errors.js';
import { checkHolder, checkKey, checkLease, checkPrefix, checkTtl } from './lease-input.js';
import type { Lease, LeaseState, LeaseStore } from './lease-store.js';

/**
 * What every lease backend shares: inputs validated once, before anything
 * reaches storage (so a refused call changes nothing and every backend
 * refuses the same inputs), and the closed state. Backends implement storage.
 */
export abstract class LeaseBackend implements LeaseStore {
  private closed = false;

  async claim(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    this.ensureOpen();
    checkKey(key);
    checkHolder(holder);
    checkTtl(ttlMs);
    return this.claimChecked(key, holder, ttlMs);
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease | null> {
    this.ensureOpen();
    checkLease(lease);
    checkTtl(ttlMs);
    return this.renewChecked(lease, ttlMs);
  }

  async complete(lease: Lease): Promise<boolean> {
    this.ensureOpen();
    checkLease(lease);
    return this.completeChecked(lease);
  }

  async release(lease: Lease): Promise<void> {
    this.ensureOpen();
    checkLease(lease);
    await this.releaseChecked(lease);
  }

  async state(key: string): Promise<LeaseState> {
    this.ensureOpen();
    checkKey(key);
    return this.stateChecked(key);
  }

  async list(prefix: string): Promise<{ key: string; state: LeaseState }[]> {
    this.ensureOpen();
    checkPrefix(prefix);
    return this.listChecked(prefix);
  }

  async clearCompleted(prefix: string): Promise<number> {
    this.ensureOpen();
    checkPrefix(prefix);
    return this.clearChecked(prefix);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.dispose();
  }

  protected ensureOpen(): void {
    if (this.closed) throw new LeaseError('TWG_LEASE_CLOSED', 'the lease store is closed');
  }

  protected abstract claimChecked(
    key: string,
    holder: string,
    ttlMs: number,
  ): Promise<Lease | null>;
  protected abstract renewChecked(lease: Lease, ttlMs: number): Promise<Lease | null>;
  protected abstract completeChecked(lease: Lease): Promise<boolean>;
  protected abstract releaseChecked(lease: Lease): Promise<void>;
  protected abstract stateChecked(key: string): Promise<LeaseState>;
  protected abstract listChecked(prefix: string): Promise<{ key: string; state: LeaseState }[]>;
  protected abstract clearChecked(prefix: string): Promise<number>;
  protected abstract dispose(): Promise<void>;
}
