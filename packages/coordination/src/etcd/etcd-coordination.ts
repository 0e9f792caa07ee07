import { ConfigError } from '@thalweg/connector-core';
import type { Lease } from '@thalweg/offset-store';
import { Etcd3, type IKeyValue } from 'etcd3';
import type {
  BinaryExpiringSet,
  BinarySetOptions,
  Coordination,
  CoordinationHealth,
  ExpiringSet,
  ExpiringSetOptions,
  Leases,
} from '../coordination.js';
import { leaseElection } from '../election.js';
import { MirroredBinarySet } from './mirrored-binary-set.js';
import { MirroredSet } from './mirrored-set.js';
import { CoordinationError } from '../errors.js';
import { checkDelta, checkName, checkTtl } from '../input.js';
import { checkLease, checkMaxEntries } from '../memory/memory-coordination.js';
import type { ClusterOptions } from '../options.js';
import { intervalScheduler } from '../scheduler.js';

/** etcd TTLs are whole seconds: a TTL is rounded up, never down (a lease never ends early). */
const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/**
 * Modes 3, 5 and 7 on an etcd cluster: every write goes through etcd's Raft
 * (we run no consensus of our own). Leases are keys under `lease/` attached
 * to an etcd lease of the TTL, so etcd deletes them when the TTL passes;
 * the fencing token is the key's create revision, which etcd only ever
 * raises. Membership and health are checked at start and watched on the
 * scheduler while running.
 */
export async function openEtcdCoordination(o: ClusterOptions): Promise<Coordination> {
  const client = new Etcd3({
    hosts: o.endpoints,
    defaultCallOptions: (context) =>
      context.isStream ? {} : { deadline: Date.now() + o.callTimeoutMs },
  });
  const ns = o.namespace;
  const unavailable = (what: string, cause: unknown) =>
    cause instanceof CoordinationError || cause instanceof ConfigError
      ? cause
      : new CoordinationError('TWG_COORDINATION_UNAVAILABLE', `etcd: ${what} failed`, cause);
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (e) {
      throw unavailable(what, e);
    }
  };

  let members: number;
  try {
    members = (await call('listing the members', () => client.cluster.memberList({}))).members
      .length;
  } catch (e) {
    client.close();
    throw e;
  }
  if (members !== o.mode) {
    client.close();
    throw new ConfigError(
      'coordination.mode',
      `is ${o.mode}, but the etcd cluster at ${o.endpoints.join(',')} has ${members} member${members === 1 ? '' : 's'}`,
    );
  }

  // Health: each endpoint asked on its own, and a quorum read through the cluster.
  const probes = o.endpoints.map(
    (host) =>
      new Etcd3({
        hosts: host,
        defaultCallOptions: () => ({ deadline: Date.now() + o.callTimeoutMs }),
      }),
  );
  let health = { kind: 'quorum', members, reachable: members } as CoordinationHealth;
  const checkHealth = async (): Promise<void> => {
    const answers = await Promise.all(
      probes.map((p) =>
        p.maintenance.status().then(
          () => true,
          () => false,
        ),
      ),
    );
    const reachable = answers.filter(Boolean).length;
    const quorum = await client
      .get(`${ns}health`)
      .exec()
      .then(
        () => true,
        () => false,
      );
    health =
      quorum && reachable > members / 2
        ? { kind: 'quorum', members, reachable }
        : {
            kind: 'no-quorum',
            members,
            reachable,
            reason: `${reachable} of ${members} members answer; a write needs ${Math.floor(members / 2) + 1}`,
          };
  };
  await checkHealth();
  if (health.kind === 'no-quorum') {
    client.close();
    for (const p of probes) p.close();
    throw new CoordinationError('TWG_COORDINATION_UNAVAILABLE', `etcd: ${health.reason}`);
  }
  const scheduler = o.scheduler ?? intervalScheduler;
  const stops = [scheduler.every(o.healthIntervalMs, checkHealth)];

  const grant = async (ttlMs: number): Promise<string> =>
    (await client.leaseClient.leaseGrant({ TTL: seconds(ttlMs), ID: 0 })).ID;

  const leaseKey = (key: string) => `${ns}lease/${key}`;
  const decode = (key: string, kv: IKeyValue): Lease & { etcdLease: string } => {
    const v = JSON.parse(kv.value.toString('utf8')) as { holder: string; expiresAt: number };
    return {
      key,
      holder: v.holder,
      token: Number(kv.create_revision),
      expiresAt: v.expiresAt,
      etcdLease: kv.lease,
    };
  };
  const read = async (key: string) => {
    const res = await client.get(leaseKey(key)).exec();
    const kv = res.kvs[0];
    return kv === undefined ? null : decode(key, kv);
  };

  const leases: Leases = {
    acquire: (key, holder, ttlMs) =>
      call('acquiring a lease', async () => {
        checkName(key, 'key');
        checkName(holder, 'holder');
        checkTtl(ttlMs);
        const id = await grant(ttlMs);
        const value = JSON.stringify({ holder, expiresAt: Date.now() + ttlMs });
        const res = await client
          .if(leaseKey(key), 'Create', '==', 0)
          .then(client.put(leaseKey(key)).value(value).lease(id))
          .commit();
        if (!res.succeeded) {
          await client.leaseClient.leaseRevoke({ ID: id }).catch(() => undefined);
          return null;
        }
        return { key, holder, token: Number(res.header.revision), expiresAt: Date.now() + ttlMs };
      }),
    renew: (lease, ttlMs) =>
      call('renewing a lease', async () => {
        checkLease(lease);
        checkTtl(ttlMs);
        const held = await read(lease.key);
        if (held === null || held.holder !== lease.holder || held.token !== lease.token)
          return null;
        // A fresh etcd lease of the new TTL, put only if the key is still this
        // claim (same create revision): a renew that lost the race changes nothing.
        const id = await grant(ttlMs);
        const expiresAt = Date.now() + ttlMs;
        const res = await client
          .if(leaseKey(lease.key), 'Create', '==', String(lease.token))
          .then(
            client
              .put(leaseKey(lease.key))
              .value(JSON.stringify({ holder: lease.holder, expiresAt }))
              .lease(id),
          )
          .commit();
        await client.leaseClient
          .leaseRevoke({ ID: res.succeeded ? held.etcdLease : id })
          .catch(() => undefined);
        return res.succeeded ? { ...lease, expiresAt } : null;
      }),
    release: (lease) =>
      call('releasing a lease', async () => {
        checkLease(lease);
        const held = await read(lease.key);
        if (held === null || held.holder !== lease.holder || held.token !== lease.token) return;
        // Revoking the etcd lease deletes the key with it.
        await client.leaseClient.leaseRevoke({ ID: held.etcdLease });
      }),
    holder: (key) =>
      call('reading a lease', async () => {
        checkName(key, 'key');
        const held = await read(key);
        return held === null
          ? null
          : { key, holder: held.holder, token: held.token, expiresAt: held.expiresAt };
      }),
  };

  const memberKey = (id: string) => `${ns}member/${id}`;
  const membership = {
    join: (id: string, ttlMs: number, info = '') =>
      call('joining', async () => {
        checkName(id, 'id');
        checkTtl(ttlMs);
        // etcd3 keeps this lease alive while the process runs; a dead member's key expires.
        const lease = client.lease(seconds(ttlMs));
        await lease.put(memberKey(id)).value(info);
        return { leave: () => call('leaving', () => lease.revoke()) };
      }),
    members: () =>
      call('listing members', async () => {
        const all = await client.getAll().prefix(memberKey('')).strings();
        return Object.entries(all)
          .map(([k, info]) => ({ id: k.slice(memberKey('').length), info }))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      }),
  };

  const counterKey = (name: string) => `${ns}counter/${name}`;
  const counters = {
    add: (name: string, delta: number) =>
      call('adding to a counter', async () => {
        checkName(name, 'name');
        checkDelta(delta);
        // Compare-and-set on the mod revision: a lost race reads again.
        for (;;) {
          const kv = (await client.get(counterKey(name)).exec()).kvs[0];
          const next = (kv === undefined ? 0 : Number(kv.value.toString('utf8'))) + delta;
          const res = await client
            .if(counterKey(name), 'Mod', '==', kv === undefined ? '0' : kv.mod_revision)
            .then(client.put(counterKey(name)).value(String(next)))
            .commit();
          if (res.succeeded) return next;
        }
      }),
    get: (name: string) =>
      call('reading a counter', async () => {
        checkName(name, 'name');
        return Number((await client.get(counterKey(name)).string()) ?? '0');
      }),
  };

  // One copy per set and bound, shared by every caller of this coordination.
  const sets = new Map<string, MirroredSet>();
  const expiringSet = (name: string, options: ExpiringSetOptions = {}): ExpiringSet => {
    checkName(name, 'name');
    const max = checkMaxEntries(options.maxEntries);
    const id = `${max}\u0000${name}`;
    let set = sets.get(id);
    if (set === undefined) {
      set = new MirroredSet({
        client,
        prefix: `${ns}set/${name}/`,
        maxEntries: max,
        call,
        quorate: () => health.kind === 'quorum',
        grant: async (ttl) => (await client.leaseClient.leaseGrant({ TTL: ttl, ID: 0 })).ID,
        now: Date.now,
      });
      sets.set(id, set);
    }
    return set;
  };

  // Binary sets apart, under `bset/`: a binary set is not the string set of the same name.
  const binarySets = new Map<string, MirroredBinarySet>();
  const binarySet = (name: string, options: BinarySetOptions = {}): BinaryExpiringSet => {
    checkName(name, 'name');
    const max = checkMaxEntries(options.maxEntries);
    const id = `${max}\u0000${name}`;
    let set = binarySets.get(id);
    if (set === undefined) {
      set = new MirroredBinarySet({
        client,
        prefix: `${ns}bset/${name}/`,
        maxEntries: max,
        quorate: () => health.kind === 'quorum',
        grant: async (ttl) => (await client.leaseClient.leaseGrant({ TTL: ttl, ID: 0 })).ID,
        now: Date.now,
      });
      binarySets.set(id, set);
    }
    return set.handle(options.onUnwritten);
  };

  return {
    mode: o.mode,
    leases,
    election: leaseElection(leases, scheduler, o.healthIntervalMs),
    membership,
    counters,
    expiringSet,
    binarySet,
    health: () => health,
    async close() {
      for (const stop of stops.splice(0)) stop();
      for (const set of sets.values()) set.close();
      await Promise.all([...binarySets.values()].map((set) => set.close()));
      client.close();
      for (const p of probes) p.close();
    },
  };
}
