import { InMemoryLeaseStore } from '../../src/lease/in-memory-lease-store.js';
import { describeLeaseContract } from './lease-contract.js';

describeLeaseContract('in memory', {
  ttlMs: 1000,
  fresh: async () => {
    let now = 1_767_225_600_000;
    const store = new InMemoryLeaseStore({ now: () => now });
    return {
      store,
      advance: async (ms) => {
        now += ms;
      },
    };
  },
});
