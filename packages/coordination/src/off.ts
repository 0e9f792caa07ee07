import { ConfigError } from '@thalweg/connector-core';
import type { LeaseStore } from '@thalweg/offset-store';
import type { Coordination, Leases } from './coordination.js';
import { leaseElection } from './election.js';
import type { Scheduler } from './scheduler.js';

const OFF_REASON = 'is 0 (off): coordination runs nowhere, so';

/**
 * Mode 0: nothing runs. Leases (and the elections built on them) fall back to
 * an offset-store lease store when one is given; membership, counters and
 * the expiring set do not exist, and asking for them is a ConfigError
 * naming `coordination.mode`, since only a different mode can fix it.
 */
export function offCoordination(
  store: LeaseStore | undefined,
  scheduler: Scheduler,
  observeIntervalMs: number,
): Coordination {
  const missing = (what: string) =>
    new ConfigError('coordination.mode', `${OFF_REASON} ${what} needs mode 1, 3, 5 or 7`);
  const noLeases = () =>
    Promise.reject(
      new ConfigError(
        'coordination.leases',
        'mode 0 has leases only from an offset-store lease store given as `leases`',
      ),
    );
  const leases: Leases =
    store === undefined
      ? { acquire: noLeases, renew: noLeases, release: noLeases, holder: noLeases }
      : {
          acquire: (key, holder, ttlMs) => store.claim(key, holder, ttlMs),
          renew: (lease, ttlMs) => store.renew(lease, ttlMs),
          release: (lease) => store.release(lease),
          async holder(key) {
            const state = await store.state(key);
            return state.kind === 'held' ? state.lease : null;
          },
        };
  const refuse = (what: string) => () => Promise.reject(missing(what));
  return {
    mode: 0,
    leases,
    election: leaseElection(leases, scheduler, observeIntervalMs),
    membership: { join: refuse('membership'), members: refuse('membership') },
    counters: { add: refuse('counters'), get: refuse('counters') },
    expiringSet() {
      throw missing('the expiring set (content dedup)');
    },
    health: () => ({ kind: 'off' }),
    close: async () => undefined,
  };
}
