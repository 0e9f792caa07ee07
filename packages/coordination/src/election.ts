import type { Lease } from '@thalweg/offset-store';
import type { Election, Leases } from './coordination.js';
import { checkName } from './input.js';
import type { Scheduler } from './scheduler.js';

/**
 * Leader election on leases, the same in every mode: the leader of an
 * election is the holder of the lease on `election/<name>`, and its fencing
 * token is the term. One mechanism, so mode 0 over an offset store's lease
 * store elects exactly as etcd does.
 */
export function leaseElection(leases: Leases, scheduler: Scheduler, intervalMs: number): Election {
  const keyOf = (election: string): string => {
    checkName(election, 'election');
    return `election/${election}`;
  };
  return {
    campaign: (election, candidate, ttlMs) => leases.acquire(keyOf(election), candidate, ttlMs),
    keep: (leadership, ttlMs) => leases.renew(leadership, ttlMs),
    resign: (leadership) => leases.release(leadership),
    leader: (election) => leases.holder(keyOf(election)),
    observe(election, listener) {
      const key = keyOf(election);
      let last: Lease | null | undefined;
      let stopped = false;
      const check = async (): Promise<void> => {
        let now: Lease | null;
        try {
          now = await leases.holder(key);
        } catch {
          // An unreachable store says nothing about who leads: the next check asks again.
          return;
        }
        if (stopped || same(last, now)) return;
        last = now;
        listener(now);
      };
      const cancel = scheduler.every(intervalMs, check);
      void check();
      return () => {
        stopped = true;
        cancel();
      };
    },
  };
}

function same(a: Lease | null | undefined, b: Lease | null): boolean {
  if (a === undefined) return false;
  if (a === null || b === null) return a === b;
  return a.holder === b.holder && a.token === b.token;
}
