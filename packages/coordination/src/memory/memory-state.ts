import type { Lease } from '@thalweg/offset-store';
import type { BinaryLookup, Places } from '../coordination.js';
import { CoordinationError } from '../errors.js';
import { BinarySet, type BinarySetSnapshot } from './binary-set.js';

/** An expiring set's entry: when it expires, and the value it was added with. */
type SetEntry = [expiresAt: number, value: string];

interface HeldLease {
  readonly holder: string;
  readonly token: number;
  readonly expiresAt: number;
}

/**
 * Everything mode 1 (and the in-memory fake) holds, on the injected clock:
 * leases with the last token of every key ever claimed (tokens only grow,
 * across a backup and restore too), members, expiring sets (string and
 * binary) and counters. Expired entries read as absent and are dropped by
 * `sweep`.
 */
export class MemoryState {
  private readonly leases = new Map<string, HeldLease>();
  private readonly tokens = new Map<string, number>();
  private readonly members = new Map<string, { info: string; expiresAt: number }>();
  /** Per set, key -> [expiry, value], in the order added (a re-add moves a key last): eviction takes the first. */
  private readonly sets = new Map<string, Map<string, SetEntry>>();
  /** Per binary set (a namespace apart from `sets`), its table. */
  private readonly binarySets = new Map<string, BinarySet>();
  private readonly counters = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  acquire(key: string, holder: string, ttlMs: number): Lease | null {
    if (this.live(key) !== null) return null;
    const token = (this.tokens.get(key) ?? 0) + 1;
    this.tokens.set(key, token);
    const held = { holder, token, expiresAt: this.now() + ttlMs };
    this.leases.set(key, held);
    return { key, ...held };
  }

  renew(lease: Lease, ttlMs: number): Lease | null {
    const held = this.live(lease.key);
    if (held === null || held.holder !== lease.holder || held.token !== lease.token) return null;
    const next = { ...held, expiresAt: this.now() + ttlMs };
    this.leases.set(lease.key, next);
    return { key: lease.key, ...next };
  }

  /** The lease on `key` if its TTL has not passed (an expired one is dropped). */
  private live(key: string): HeldLease | null {
    const held = this.leases.get(key);
    if (held === undefined) return null;
    if (held.expiresAt > this.now()) return held;
    this.leases.delete(key);
    return null;
  }

  release(lease: Lease): void {
    const held = this.leases.get(lease.key);
    if (held?.holder === lease.holder && held.token === lease.token) this.leases.delete(lease.key);
  }

  holder(key: string): Lease | null {
    const held = this.live(key);
    return held === null ? null : { key, ...held };
  }

  putMember(id: string, info: string, ttlMs: number): void {
    this.members.set(id, { info, expiresAt: this.now() + ttlMs });
  }

  removeMember(id: string): void {
    this.members.delete(id);
  }

  liveMembers(): { id: string; info: string }[] {
    const now = this.now();
    return [...this.members]
      .filter(([, m]) => m.expiresAt > now)
      .map(([id, m]) => ({ id, info: m.info }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  hasMany(set: string, keys: readonly string[]): boolean[] {
    return this.getMany(set, keys).map((v) => v !== null);
  }

  getMany(set: string, keys: readonly string[]): (string | null)[] {
    const entries = this.sets.get(set);
    const now = this.now();
    return keys.map((k) => {
      const entry = entries?.get(k);
      return entry !== undefined && entry[0] > now ? entry[1] : null;
    });
  }

  addMany(
    set: string,
    keys: readonly string[],
    ttlMs: number,
    maxEntries: number,
    values?: readonly string[],
  ): void {
    let entries = this.sets.get(set);
    if (entries === undefined) this.sets.set(set, (entries = new Map<string, SetEntry>()));
    const expiresAt = this.now() + ttlMs;
    keys.forEach((k, i) => {
      entries.delete(k);
      entries.set(k, [expiresAt, values?.[i] ?? '']);
    });
    for (const k of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(k);
    }
  }

  setSize(set: string): number {
    return this.sets.get(set)?.size ?? 0;
  }

  binaryGetMany(set: string, keys: Int32Array, count: number): BinaryLookup {
    const table = this.binarySets.get(set);
    if (table !== undefined) return table.getMany(keys, count, this.now());
    return {
      found: new Uint8Array(count),
      partitions: new Uint32Array(count),
      offsets: new Float64Array(count),
    };
  }

  binaryAddMany(
    set: string,
    keys: Int32Array,
    count: number,
    ttlMs: number,
    maxEntries: number,
    places: Places,
  ): void {
    const table = this.binaryTable(set, count, maxEntries);
    table.addMany(keys, count, this.now() + ttlMs, places, maxEntries);
  }

  binaryClaimMany(
    set: string,
    keys: Int32Array,
    count: number,
    ttlMs: number,
    maxEntries: number,
    places: Places,
  ): BinaryLookup {
    const now = this.now();
    return this.binaryTable(set, count, maxEntries).claimMany(
      keys,
      count,
      now,
      now + ttlMs,
      places,
      maxEntries,
    );
  }

  private binaryTable(set: string, count: number, maxEntries: number): BinarySet {
    let table = this.binarySets.get(set);
    if (table === undefined) {
      this.binarySets.set(set, (table = new BinarySet(Math.min(count, maxEntries))));
    }
    return table;
  }

  binarySetSize(set: string): number {
    return this.binarySets.get(set)?.size ?? 0;
  }

  add(name: string, delta: number): number {
    const value = (this.counters.get(name) ?? 0) + delta;
    if (!Number.isSafeInteger(value)) {
      throw new CoordinationError(
        'TWG_COORDINATION_INVALID',
        `counter ${name}: ${value} is beyond a safe integer`,
        undefined,
        'delta',
      );
    }
    this.counters.set(name, value);
    return value;
  }

  get(name: string): number {
    return this.counters.get(name) ?? 0;
  }

  /** Drops what has expired, so a backup carries only what is live. */
  sweep(): void {
    const now = this.now();
    for (const [k, l] of this.leases) if (l.expiresAt <= now) this.leases.delete(k);
    for (const [k, m] of this.members) if (m.expiresAt <= now) this.members.delete(k);
    for (const entries of this.sets.values()) {
      for (const [k, e] of entries) if (e[0] <= now) entries.delete(k);
    }
    for (const table of this.binarySets.values()) table.sweep(now);
  }

  /** The state as a JSON document (version 1), expired entries left out. */
  snapshot(): string {
    this.sweep();
    return JSON.stringify({
      version: 1,
      leases: [...this.leases],
      tokens: [...this.tokens],
      members: [...this.members],
      sets: [...this.sets].map(([name, entries]) => [name, [...entries]]),
      binarySets: [...this.binarySets].map(([name, table]) => [name, table.snapshot()]),
      counters: [...this.counters],
    });
  }

  /** Replaces the state with a snapshot's; throws TWG_COORDINATION_BACKUP_CORRUPT on anything else. */
  restore(body: string, where: string): void {
    let doc: Snapshot;
    let binary: [string, BinarySet][];
    try {
      doc = JSON.parse(body) as Snapshot;
      if (doc.version !== 1) throw new Error(`version ${String(doc.version)} is not 1`);
      const maps = [doc.leases, doc.tokens, doc.members, doc.sets, doc.counters];
      if (!maps.every(Array.isArray)) throw new Error('a section is not a list');
      // Absent from backups written before binary sets existed.
      doc.binarySets ??= [];
      if (!Array.isArray(doc.binarySets)) throw new Error('binarySets is not a list');
      binary = doc.binarySets.map(([name, s]): [string, BinarySet] => [
        name,
        BinarySet.restored(s),
      ]);
    } catch (e) {
      throw new CoordinationError(
        'TWG_COORDINATION_BACKUP_CORRUPT',
        `${where} is not a coordination backup`,
        e,
      );
    }
    reset(this.leases, doc.leases);
    reset(this.tokens, doc.tokens);
    reset(this.members, doc.members);
    reset(this.counters, doc.counters);
    reset(this.binarySets, binary);
    this.sets.clear();
    // Version 1 backups written before sets held values list [key, expiry] pairs.
    for (const [name, entries] of doc.sets) {
      this.sets.set(
        name,
        new Map(
          entries.map(([k, e]): [string, SetEntry] =>
            Array.isArray(e) ? [k, [e[0], e[1]]] : [k, [e, '']],
          ),
        ),
      );
    }
    this.sweep();
  }
}

interface Snapshot {
  version: unknown;
  leases: [string, HeldLease][];
  tokens: [string, number][];
  members: [string, { info: string; expiresAt: number }][];
  sets: [string, [string, SetEntry | number][]][];
  counters: [string, number][];
  binarySets?: [string, BinarySetSnapshot][];
}

function reset<K, V>(map: Map<K, V>, entries: [K, V][]): void {
  map.clear();
  for (const [k, v] of entries) map.set(k, v);
}
