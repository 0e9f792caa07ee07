import { ConfigError } from '@thalweg/connector-core';
import { etcd } from '@thalweg/test-services';
import { describe, expect, it } from 'vitest';
import { coordination } from '../src/index.js';
import { describeCoordinationContract } from './support/coordination-contract.js';
import { etcdFixture, openOnEtcd } from './support/etcd-fixture.js';

// etcd's TTLs are whole seconds and its shortest lease is about 1.5 election
// timeouts (1 s on the test cluster), so 2 s.
describeCoordinationContract('mode 3 (etcd)', { ttlMs: 2000, fresh: etcdFixture });

describe('mode 3 at start', () => {
  it('checks the cluster size against the mode, naming both', async () => {
    const err = await coordination({ mode: 5, endpoints: etcd().endpoints }).then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ path: 'coordination.mode' });
    expect((err as ConfigError).reason).toMatch(/^is 5, but the etcd cluster at .* has 3 members$/);
  });

  it('reports a quorum of three, all reachable', async () => {
    const c = await openOnEtcd();
    expect(c.health()).toEqual({ kind: 'quorum', members: 3, reachable: 3 });
    await c.close();
  });

  it('refuses to start on a cluster nobody answers for', async () => {
    const err = await coordination({
      mode: 3,
      endpoints: ['http://127.0.0.1:9'],
      callTimeoutMs: 500,
    }).then(
      () => new Error('expected a refusal'),
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'TWG_COORDINATION_UNAVAILABLE' });
  });
});
