import type { BinaryLookup, Places } from '../coordination.js';
import { BINARY_KEY_BYTES, KeyTable } from './key-table.js';

/** A binary set as a backup holds it: its live keys oldest first, with their columns. */
export interface BinarySetSnapshot {
  /** The keys, base64, BINARY_KEY_BYTES each. */
  readonly keys: string;
  readonly expiresAt: number[];
  readonly partitions: number[];
  readonly offsets: number[];
}

/**
 * What a set's owner keeps per entry beside the set's own columns (the etcd
 * copy: the piece that wrote a key and that piece's revision), told of every
 * entry the set fills or removes, so its columns follow the set's entries.
 */
export interface EntryHooks {
  /** The table's entries now number `capacity`: widen the columns to it. */
  widen(capacity: number): void;
  /** Entry `entry` was just given a key's place; `replaced` when it held that key already. */
  filled(entry: number, replaced: boolean): void;
  /** Entry `entry` is about to stop holding its key (evicted, swept, removed). */
  removing(entry: number): void;
}

/**
 * The binary expiring set of mode 1, and the copy each process holds of an
 * etcd binary set (with {@link EntryHooks}): 16-byte keys, each with a place (a partition
 * and an offset) and an expiry, in a {@link KeyTable} and columns of typed
 * arrays indexed by its entries, so adding or reading a key allocates
 * nothing per key. Membership is exact. Eviction keeps the order of the
 * string sets: the oldest add goes first, and a re-add makes a key the
 * newest. That order is a ring of (entry, stamp) pairs: a re-add or a
 * removal leaves a stale pair behind (its stamp no longer the entry's),
 * skipped when reached and dropped when the ring is compacted.
 */
export class BinarySet {
  private readonly table: KeyTable;
  private partitions: Uint32Array;
  private offsets: Float64Array;
  private expires: Float64Array;
  private stamps: Float64Array;
  private stamp = 0;
  private ringEntries = new Int32Array(16);
  private ringStamps = new Float64Array(16);
  private ringHead = 0;
  private ringLength = 0;

  constructor(
    capacity = 8,
    seed?: number,
    private readonly hooks?: EntryHooks,
  ) {
    this.table = new KeyTable(capacity, (c) => this.widen(c), seed);
    const c = this.table.capacity;
    this.partitions = new Uint32Array(c);
    this.offsets = new Float64Array(c);
    this.expires = new Float64Array(c);
    this.stamps = new Float64Array(c);
  }

  /** Keys held (expired ones counted until swept). */
  get size(): number {
    return this.table.size;
  }

  /** Key i of `keys` (see keyWords): found[i] 1 and its place when held and not expired at `now`. */
  getMany(keys: Int32Array, count: number, now: number): BinaryLookup {
    const found = new Uint8Array(count);
    const partitions = new Uint32Array(count);
    const offsets = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const e = this.table.find(keys, i);
      if (e < 0 || (this.expires[e] ?? 0) <= now) continue;
      found[i] = 1;
      partitions[i] = this.partitions[e] ?? 0;
      offsets[i] = this.offsets[e] ?? 0;
    }
    return { found, partitions, offsets };
  }

  /** Adds (or re-adds) every key with its place, to expire at `expiresAt`; then evicts down to `maxEntries`. */
  addMany(
    keys: Int32Array,
    count: number,
    expiresAt: number,
    places: Places,
    maxEntries: number,
  ): void {
    for (let i = 0; i < count; i++) {
      this.put(keys, i, expiresAt, places.partitions[i] ?? 0, places.offsets[i] ?? 0);
    }
    this.evict(maxEntries);
  }

  /**
   * Key by key in order: a key held (not expired at `now`) answers its
   * place; any other is added with its place in `places`, to expire at
   * `expiresAt`, and answers that. Then evicts down to `maxEntries`.
   */
  claimMany(
    keys: Int32Array,
    count: number,
    now: number,
    expiresAt: number,
    places: Places,
    maxEntries: number,
  ): BinaryLookup {
    const found = new Uint8Array(count);
    const partitions = new Uint32Array(count);
    const offsets = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      // One probe: the key's entry, new or held.
      const e = this.table.insert(keys, i);
      if (!this.table.created && (this.expires[e] ?? 0) > now) {
        found[i] = 1;
        partitions[i] = this.partitions[e] ?? 0;
        offsets[i] = this.offsets[e] ?? 0;
        continue;
      }
      const p = places.partitions[i] ?? 0;
      const o = places.offsets[i] ?? 0;
      this.fill(e, expiresAt, p, o, !this.table.created);
      partitions[i] = p;
      offsets[i] = o;
    }
    this.evict(maxEntries);
    return { found, partitions, offsets };
  }

  /** Entries the columns hold now (an owner's columns start at it; `widen` tells of growth). */
  get capacity(): number {
    return this.table.capacity;
  }

  /** Entries [0, entryBound) may be live: a bound for the owner's columns. */
  get entryBound(): number {
    return this.table.entryBound;
  }

  /** The entry holding key `at` of `keys` (expired or not), or -1. */
  find(keys: Int32Array, at: number): number {
    return this.table.find(keys, at);
  }

  /** Adds (or re-adds) key `at` of `keys` with its place; call `evict` after a run of them. */
  put(keys: Int32Array, at: number, expiresAt: number, partition: number, offset: number): void {
    const e = this.table.insert(keys, at);
    this.fill(e, expiresAt, partition, offset, !this.table.created);
  }

  /** Stops holding the key of entry `entry` (a no-op when it holds none). */
  remove(entry: number): void {
    if (!this.table.isLive(entry)) return;
    this.hooks?.removing(entry);
    this.table.remove(entry);
  }

  /** Drops the keys expired at `now`. */
  sweep(now: number): void {
    for (let e = 0; e < this.table.entryBound; e++) {
      if (this.table.isLive(e) && (this.expires[e] ?? 0) <= now) this.remove(e);
    }
    if (this.ringLength > 2 * this.table.size + 64) this.compact();
  }

  /** The live keys, oldest first (`sweep` first to leave the expired out). */
  snapshot(): BinarySetSnapshot {
    this.compact();
    const n = this.ringLength;
    const keys = new Int32Array((n * BINARY_KEY_BYTES) / 4);
    const expiresAt: number[] = [];
    const partitions: number[] = [];
    const offsets: number[] = [];
    for (let i = 0; i < n; i++) {
      const e = this.ringEntries[(this.ringHead + i) & (this.ringEntries.length - 1)] ?? 0;
      this.table.copyKey(e, keys, i);
      expiresAt.push(this.expires[e] ?? 0);
      partitions.push(this.partitions[e] ?? 0);
      offsets.push(this.offsets[e] ?? 0);
    }
    return { keys: Buffer.from(keys.buffer).toString('base64'), expiresAt, partitions, offsets };
  }

  /** A set holding a snapshot's keys in its order; throws on a malformed one. */
  static restored(s: BinarySetSnapshot): BinarySet {
    const bytes = Buffer.from(s.keys, 'base64');
    const n = s.expiresAt.length;
    if (bytes.byteLength !== n * BINARY_KEY_BYTES || !isColumn(s.partitions, n, 0xffff_ffff)) {
      throw new Error('a binary set has columns of different lengths or bad values');
    }
    if (!isColumn(s.offsets, n, Number.MAX_SAFE_INTEGER) || !isColumn(s.expiresAt, n, Infinity)) {
      throw new Error('a binary set has columns of different lengths or bad values');
    }
    const set = new BinarySet(n);
    const words = new Int32Array(new Uint8Array(bytes).buffer);
    for (let i = 0; i < n; i++) {
      set.put(words, i, s.expiresAt[i] ?? 0, s.partitions[i] ?? 0, s.offsets[i] ?? 0);
    }
    return set;
  }

  /** Gives entry `e` its columns and makes it the newest add. */
  private fill(
    e: number,
    expiresAt: number,
    partition: number,
    offset: number,
    replaced: boolean,
  ): void {
    this.partitions[e] = partition;
    this.offsets[e] = offset;
    this.expires[e] = expiresAt;
    const stamp = ++this.stamp;
    this.stamps[e] = stamp;
    if (this.ringLength === this.ringEntries.length) this.compact();
    const mask = this.ringEntries.length - 1;
    const slot = (this.ringHead + this.ringLength) & mask;
    this.ringEntries[slot] = e;
    this.ringStamps[slot] = stamp;
    this.ringLength += 1;
    this.hooks?.filled(e, replaced);
  }

  /** Removes the oldest adds until at most `maxEntries` are held. */
  evict(maxEntries: number): void {
    const mask = this.ringEntries.length - 1;
    while (this.table.size > maxEntries && this.ringLength > 0) {
      const e = this.ringEntries[this.ringHead] ?? 0;
      const stamp = this.ringStamps[this.ringHead];
      this.ringHead = (this.ringHead + 1) & mask;
      this.ringLength -= 1;
      if (this.table.isLive(e) && this.stamps[e] === stamp) this.remove(e);
    }
  }

  /** Rewrites the ring with only its current pairs, oldest first, with room to add. */
  private compact(): void {
    let size = 16;
    while (size < this.table.size * 2) size *= 2;
    const entries = new Int32Array(size);
    const stamps = new Float64Array(size);
    const mask = this.ringEntries.length - 1;
    let n = 0;
    for (let i = 0; i < this.ringLength; i++) {
      const at = (this.ringHead + i) & mask;
      const e = this.ringEntries[at] ?? 0;
      const stamp = this.ringStamps[at] ?? 0;
      if (!this.table.isLive(e) || this.stamps[e] !== stamp) continue;
      entries[n] = e;
      stamps[n++] = stamp;
    }
    this.ringEntries = entries;
    this.ringStamps = stamps;
    this.ringHead = 0;
    this.ringLength = n;
  }

  private widen(capacity: number): void {
    this.partitions = grownTo(this.partitions, new Uint32Array(capacity));
    this.offsets = grownTo(this.offsets, new Float64Array(capacity));
    this.expires = grownTo(this.expires, new Float64Array(capacity));
    this.stamps = grownTo(this.stamps, new Float64Array(capacity));
    this.hooks?.widen(capacity);
  }
}

function grownTo<T extends Uint32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function isColumn(values: unknown, n: number, max: number): values is number[] {
  return (
    Array.isArray(values) &&
    values.length === n &&
    values.every((v) => typeof v === 'number' && v >= 0 && v <= max)
  );
}
