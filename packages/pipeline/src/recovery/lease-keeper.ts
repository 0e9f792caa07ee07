import type { Cancel, Scheduler } from '@thalweg/connector-core';
import type { Lease, LeaseStore } from '@thalweg/offset-store';
import type { RecoveryConfig } from './recovery-config.js';

/**
 * Renews a window's lease on a timer while the window is worked on, not only
 * between batches: a submit held by the sink's backpressure (shared with the
 * live lane) or a long flush would otherwise let the lease expire, and
 * another worker claim it, under a worker still writing.
 */
export class LeaseKeeper {
  /** Set once a renewal answered that another worker has the key. */
  lost = false;
  private renewing: Promise<void> = Promise.resolve();
  private readonly cancel: Cancel;

  constructor(
    private lease: Lease,
    private readonly leases: LeaseStore,
    private readonly config: RecoveryConfig,
    scheduler: Scheduler,
    private readonly log: (line: string) => void,
  ) {
    this.cancel = scheduler.every(config.renewEveryMs, () => {
      this.renewing = this.renewing.then(() => this.renew());
      return this.renewing;
    });
  }

  /** Stops renewing (idempotent); the lease as last renewed, or null once lost. */
  async stop(): Promise<Lease | null> {
    this.cancel();
    await this.renewing;
    return this.lost ? null : this.lease;
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    try {
      const renewed = await this.leases.renew(this.lease, this.config.leaseTtlMs);
      if (renewed === null) this.lost = true;
      else this.lease = renewed;
    } catch (error) {
      // The next tick tries again; the lease may expire meanwhile (then lost).
      this.log(`renewing its lease failed: ${message(error)}`);
    }
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
