import { etcd, uniqueName, waitFor, type EtcdCluster } from '@thalweg/test-services';
import { coordination, type Coordination } from '../../src/index.js';
import type { CoordinationFixture } from './coordination-contract.js';

/** A mode 3 coordination on the test cluster (or `cluster`), in a namespace of its own. */
export async function openOnEtcd(
  extra: { healthIntervalMs?: number } = {},
  cluster: EtcdCluster = etcd(),
): Promise<Coordination> {
  return coordination({
    mode: 3,
    endpoints: cluster.endpoints,
    namespace: `${uniqueName('twg-coord')}/`,
    callTimeoutMs: 3000,
    ...extra,
  });
}

/** Real time on a real cluster: every wait has a deadline past the TTL. */
export async function etcdFixture(): Promise<CoordinationFixture> {
  return {
    coordination: await openOnEtcd({ healthIntervalMs: 100 }),
    after: (ms, check, what) => waitFor(check, what, { timeoutMs: ms + 10_000, everyMs: 100 }),
    eventually: (check, what) => waitFor(check, what, { timeoutMs: 10_000 }),
  };
}
