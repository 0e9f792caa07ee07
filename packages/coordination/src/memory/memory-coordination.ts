import type { Lease } from '@thalweg/offset-store';
import type {
  BinaryExpiringSet,
  BinarySetOptions,
  Coordination,
  CoordinationHealth,
  CoordinationMode,
  ExpiringSet,
  ExpiringSetOptions,
  Leases,
  Places,
} from '../coordination.js';
import { leaseElection } from '../election.js';
import { CoordinationError, invalidInput } from '../errors.js';
import { checkDelta, checkKeys, checkName, checkTtl, checkValues } from '../input.js';
import { intervalScheduler, type Scheduler } from '../scheduler.js';
import { BINARY_KEY_BYTES, keyWords } from './key-table.js';
import { MemoryState } from './memory-state.js';

/** A set's bound unless told: about 100 MB of 64-character hashes. */
export const DEFAULT_MAX_SET_ENTRIES = 1_000_000;

export interface InMemoryCoordinationOptions {
  readonly now?: () => number;
  readonly scheduler?: Scheduler;
  /** How often expiry is swept, members kept alive and leaders observed; 1 s unless told. */
  readonly tickMs?: number;
}

/**
 * Coordination held in this process: the fake for tests and users, and the
 * core of mode 1 (which adds the backup). Every answer is exact and
 * immediate; time is the injected clock.
 */
export class MemoryCoordination implements Coordination {
  readonly mode: CoordinationMode = 1;
  readonly leases: Leases;
  readonly election;
  readonly membership;
  readonly counters;
  private readonly stops: (() => void)[] = [];
  private closed = false;

  constructor(
    readonly state: MemoryState,
    private readonly options: { now: () => number; scheduler: Scheduler; tickMs: number },
    private readonly healthOf: () => CoordinationHealth = () => ({
      kind: 'single-node',
      lastBackupAt: null,
    }),
    /** Runs once on close, after every periodic task stopped (mode 1's last backup). */
    private readonly onClose: () => Promise<void> = async () => undefined,
  ) {
    const s = state;
    const use = <T>(run: () => T): Promise<T> => {
      if (this.closed) {
        return Promise.reject(
          new CoordinationError('TWG_COORDINATION_CLOSED', 'the coordination was closed'),
        );
      }
      try {
        return Promise.resolve(run());
      } catch (e) {
        return Promise.reject(e instanceof Error ? e : new Error(String(e)));
      }
    };
    this.leases = {
      acquire: (key, holder, ttlMs) =>
        use(() => {
          checkName(key, 'key');
          checkName(holder, 'holder');
          checkTtl(ttlMs);
          return s.acquire(key, holder, ttlMs);
        }),
      renew: (lease, ttlMs) =>
        use(() => {
          checkLease(lease);
          checkTtl(ttlMs);
          return s.renew(lease, ttlMs);
        }),
      release: (lease) =>
        use(() => {
          checkLease(lease);
          s.release(lease);
        }),
      holder: (key) =>
        use(() => {
          checkName(key, 'key');
          return s.holder(key);
        }),
    };
    this.election = leaseElection(this.leases, options.scheduler, options.tickMs);
    this.membership = {
      join: (id: string, ttlMs: number, info = '') =>
        use(() => {
          checkName(id, 'id');
          checkTtl(ttlMs);
          s.putMember(id, info, ttlMs);
          // Kept alive on every tick while this process runs, as etcd keeps a lease alive.
          const stop = options.scheduler.every(options.tickMs, () => s.putMember(id, info, ttlMs));
          this.stops.push(stop);
          return {
            leave: () =>
              use(() => {
                stop();
                s.removeMember(id);
              }),
          };
        }),
      members: () => use(() => s.liveMembers()),
    };
    this.counters = {
      add: (name: string, delta: number) =>
        use(() => {
          checkName(name, 'name');
          checkDelta(delta);
          return s.add(name, delta);
        }),
      get: (name: string) =>
        use(() => {
          checkName(name, 'name');
          return s.get(name);
        }),
    };
    this.stops.push(options.scheduler.every(options.tickMs, () => s.sweep()));
    this.use = use;
  }

  private readonly use: <T>(run: () => T) => Promise<T>;

  expiringSet(name: string, options: ExpiringSetOptions = {}): ExpiringSet {
    checkName(name, 'name');
    const max = checkMaxEntries(options.maxEntries);
    const s = this.state;
    return {
      hasMany: (keys) =>
        this.use(() => {
          checkKeys(keys);
          return s.hasMany(name, keys);
        }),
      getMany: (keys) =>
        this.use(() => {
          checkKeys(keys);
          return s.getMany(name, keys);
        }),
      addMany: (keys, ttlMs, values) =>
        this.use(() => {
          checkKeys(keys);
          checkTtl(ttlMs);
          checkValues(keys, values);
          s.addMany(name, keys, ttlMs, max, values);
        }),
      size: () => this.use(() => s.setSize(name)),
    };
  }

  binarySet(name: string, options: BinarySetOptions = {}): BinaryExpiringSet {
    checkName(name, 'name');
    const max = checkMaxEntries(options.maxEntries);
    const s = this.state;
    const open = (): void => {
      if (this.closed) {
        throw new CoordinationError('TWG_COORDINATION_CLOSED', 'the coordination was closed');
      }
    };
    return {
      ready: () =>
        this.closed
          ? Promise.reject(
              new CoordinationError('TWG_COORDINATION_CLOSED', 'the coordination was closed'),
            )
          : Promise.resolve(),
      flushed: () => Promise.resolve(),
      getMany: (keys, count) => {
        open();
        return s.binaryGetMany(name, checkedWords(keys, count), count);
      },
      addMany: (keys, count, ttlMs, places) => {
        open();
        const words = checkedWords(keys, count);
        checkTtl(ttlMs);
        checkPlaces(places, count);
        s.binaryAddMany(name, words, count, ttlMs, max, places);
      },
      claimMany: (keys, count, ttlMs, places) => {
        open();
        const words = checkedWords(keys, count);
        checkTtl(ttlMs);
        checkPlaces(places, count);
        return s.binaryClaimMany(name, words, count, ttlMs, max, places);
      },
      size: () => {
        open();
        return s.binarySetSize(name);
      },
    };
  }

  health(): CoordinationHealth {
    return this.healthOf();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.stops.splice(0)) stop();
    await this.onClose();
  }
}

/** The fake: mode 1's behaviour with no backup. */
export function inMemoryCoordination(options: InMemoryCoordinationOptions = {}): Coordination {
  const now = options.now ?? Date.now;
  return new MemoryCoordination(new MemoryState(now), {
    now,
    scheduler: options.scheduler ?? intervalScheduler,
    tickMs: options.tickMs ?? 1000,
  });
}

export function checkMaxEntries(max: unknown): number {
  if (max === undefined) return DEFAULT_MAX_SET_ENTRIES;
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
    throw invalidInput('maxEntries', `${JSON.stringify(max)} is not a positive whole number`);
  }
  return max;
}

/** `count` packed binary keys as words, or TWG_COORDINATION_INVALID naming `keys`. */
export function checkedWords(keys: Uint8Array, count: number): Int32Array {
  if (!(keys instanceof Uint8Array) || !Number.isSafeInteger(count) || count < 0) {
    throw invalidInput('keys', 'must be a Uint8Array with a whole count of keys');
  }
  if (keys.byteLength < count * BINARY_KEY_BYTES) {
    throw invalidInput('keys', `${keys.byteLength} bytes do not hold ${count} keys`);
  }
  return keyWords(keys, count);
}

/** A binary add's places: a partition and a safe non-negative offset per key. */
export function checkPlaces(places: Places, count: number): void {
  if (!(places.partitions instanceof Uint32Array) || places.partitions.length < count) {
    throw invalidInput('places.partitions', `must be a Uint32Array of at least ${count}`);
  }
  if (!(places.offsets instanceof Float64Array) || places.offsets.length < count) {
    throw invalidInput('places.offsets', `must be a Float64Array of at least ${count}`);
  }
  for (let i = 0; i < count; i++) {
    const o = places.offsets[i] ?? -1;
    if (!Number.isSafeInteger(o) || o < 0) {
      throw invalidInput(`places.offsets[${i}]`, `${o} is not a safe non-negative integer`);
    }
  }
}

export function checkLease(lease: unknown): asserts lease is Lease {
  if (typeof lease !== 'object' || lease === null) throw invalidInput('lease', 'is not a lease');
  const l = lease as Record<string, unknown>;
  checkName(l['key'], 'key');
  checkName(l['holder'], 'holder');
  const token = l['token'];
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token <= 0) {
    throw invalidInput('lease.token', `${String(token)} is not a positive safe integer`);
  }
}
