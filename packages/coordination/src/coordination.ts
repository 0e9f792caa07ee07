import type { Lease } from '@thalweg/offset-store';

/**
 * The coordination tier behind one interface, whatever the mode: 0 (off),
 * 1 (one node in this process, backed up to object storage) or 3, 5, 7 (an
 * etcd cluster of that size). See ADR 0035.
 *
 * Nothing held here is the sole record of anything that matters: leases
 * expire anyway, the expiring set serves best-effort content dedup, and
 * coverage is durable in the offset store. Losing this state costs waiting
 * out a TTL or a missed dedup, never a record.
 */
export interface Coordination {
  readonly mode: CoordinationMode;
  /** Leases with a TTL and a fencing token (the offset store's `Lease`). */
  readonly leases: Leases;
  /** Leader election (the recovery driver), built on `leases`. */
  readonly election: Election;
  /** Who is running: a TTL'd key per member, kept alive while it runs. */
  readonly membership: Membership;
  readonly counters: Counters;
  /**
   * The bounded expiring set named `name` (content dedup's seen-set). Mode 0
   * has none: asking for it is a ConfigError naming `coordination.mode`.
   */
  expiringSet(name: string, options?: ExpiringSetOptions): ExpiringSet;
  /**
   * The binary expiring set named `name`: mode 1 and the in-memory fake hold
   * it in this process, etcd (3, 5, 7) in a copy in each process (ADR 0037);
   * absent in mode 0. A set of its own, apart from `expiringSet(name)`.
   */
  binarySet?(name: string, options?: BinarySetOptions): BinaryExpiringSet;
  /** The last health seen (watched while running), without a round trip. */
  health(): CoordinationHealth;
  /** Stops the watches; mode 1 takes a last backup first. */
  close(): Promise<void>;
}

export type CoordinationMode = 0 | 1 | 3 | 5 | 7;

export type { Lease };

/**
 * Exclusive TTL'd claims of a key. A claim takes a fencing token larger than
 * every earlier claim's of that key, so a holder whose lease lapsed and was
 * claimed again fails its next renew (null) and must stop.
 */
export interface Leases {
  /** Claims `key` if nobody holds it live (never re-entrant); null otherwise. */
  acquire(key: string, holder: string, ttlMs: number): Promise<Lease | null>;
  /** Extends a lease to `ttlMs` from now; null if it was lost. */
  renew(lease: Lease, ttlMs: number): Promise<Lease | null>;
  /** Gives the key up at once; a no-op if it was lost. */
  release(lease: Lease): Promise<void>;
  /** The live lease on `key`, or null. */
  holder(key: string): Promise<Lease | null>;
}

/** The leader of an election is the holder of its lease. */
export interface Election {
  /** Becomes leader of `election` if it has none; null while another leads. */
  campaign(election: string, candidate: string, ttlMs: number): Promise<Lease | null>;
  /** Keeps leading (a renew): null once leadership was lost. */
  keep(leadership: Lease, ttlMs: number): Promise<Lease | null>;
  resign(leadership: Lease): Promise<void>;
  leader(election: string): Promise<Lease | null>;
  /**
   * Calls `listener` with the current leader (or null) on every change seen,
   * checked on the coordination's scheduler; returns the unsubscribe.
   */
  observe(election: string, listener: (leader: Lease | null) => void): () => void;
}

export interface Member {
  readonly id: string;
  /** What the member says about itself (its roles, an address). */
  readonly info: string;
}

export interface Membership {
  /**
   * Registers `id` under a key that expires `ttlMs` after the member stops
   * (it is kept alive while this process runs); `leave` removes it at once.
   */
  join(id: string, ttlMs: number, info?: string): Promise<{ leave(): Promise<void> }>;
  /** The live members, sorted by id. */
  members(): Promise<Member[]>;
}

export interface Counters {
  /** Adds `delta` (a safe integer) and answers the new value. */
  add(name: string, delta: number): Promise<number>;
  /** The value, 0 if never added to. */
  get(name: string): Promise<number>;
}

export interface ExpiringSetOptions {
  /**
   * Most keys held; adding beyond it evicts the oldest first. Eviction only
   * makes a key read as unseen (a missed dedup), never the reverse.
   */
  readonly maxEntries?: number;
}

export interface BinarySetOptions extends ExpiringSetOptions {
  /**
   * Told when `keys` keys added here could not be written where other
   * processes read them (etcd: a background write failed or was dropped at
   * close). They stay held here; other processes miss them (a missed dedup,
   * never a wrong one). Never called in process (mode 1, the fake).
   */
  readonly onUnwritten?: (keys: number, error: Error) => void;
}

/**
 * A bounded set of keys that each expire a TTL after they were added, with
 * exact membership: never a probabilistic filter, whose false positive
 * would drop a legitimate record. Operations are bulk, one call per batch.
 */
export interface ExpiringSet {
  /** For each key, whether it is in the set (added, not expired, not evicted). */
  hasMany(keys: readonly string[]): Promise<boolean[]>;
  /**
   * For each key, the value it was added with ('' when added without one),
   * or null when it is not in the set: the lookup content dedup makes, since
   * its set maps a content hash to the record id of the first occurrence.
   */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /**
   * Adds every key (again: its TTL restarts and its value is replaced) to
   * expire `ttlMs` from now; `values[i]`, when given, is kept with `keys[i]`.
   */
  addMany(keys: readonly string[], ttlMs: number, values?: readonly string[]): Promise<void>;
  /** How many keys are held (expired ones may still be counted until swept). */
  size(): Promise<number>;
}

/**
 * Where a key was first seen, per key: a partition (an unsigned 32-bit
 * number) and an offset (a safe non-negative integer).
 */
export interface Places {
  readonly partitions: Uint32Array;
  readonly offsets: Float64Array;
}

/** A binary lookup's answer: `found[i]` 1 when key i is held, and then its place. */
export interface BinaryLookup extends Places {
  readonly found: Uint8Array;
}

/**
 * An expiring set of 16-byte keys (BINARY_KEY_BYTES: a content hash), each
 * held with a place, answered from this process: the same exact membership,
 * TTL and eviction as {@link ExpiringSet}, without a string per key. Keys are
 * passed packed, key i at bytes [16 i, 16 i + 16). Every call takes effect in
 * this process when it is made, in call order, so it is synchronous; on etcd
 * an add also reaches the other processes' copies in the background (see
 * `flushed`). A call throws TWG_COORDINATION_CLOSED once the coordination is
 * closed, and on etcd TWG_COORDINATION_UNAVAILABLE while the copy is not kept
 * current (not loaded yet, no quorum, the watch down).
 */
export interface BinaryExpiringSet {
  /**
   * Resolves once the set answers (etcd: its copy loaded and watched; at
   * once in process); rejects with TWG_COORDINATION_UNAVAILABLE when it
   * cannot now, and the next call tries again.
   */
  ready(): Promise<void>;
  /**
   * Resolves once every add made so far was written where other processes
   * read it, or failed (told to `onUnwritten`); never rejects. At once in
   * process.
   */
  flushed(): Promise<void>;
  /** For each of the `count` keys, whether it is held (added, not expired, not evicted) and where. */
  getMany(keys: Uint8Array, count: number): BinaryLookup;
  /** Adds every key (again: its TTL restarts, its place is replaced, it becomes the newest). */
  addMany(keys: Uint8Array, count: number, ttlMs: number, places: Places): void;
  /**
   * Lookup and add in one pass, key by key in order: a key held answers the
   * place it is held with (`found[i]` 1); any other is added with its place
   * in `places`, to expire `ttlMs` from now, and answers that place. So a
   * later key of the same call equal to an earlier one finds it held.
   * Content dedup's whole question for a piece: a record whose answer is
   * not its own place is a duplicate.
   */
  claimMany(keys: Uint8Array, count: number, ttlMs: number, places: Places): BinaryLookup;
  /** How many keys are held (expired ones may still be counted until swept). */
  size(): number;
}

export type CoordinationHealth =
  | { readonly kind: 'off' }
  /** Mode 1; `lastBackupAt` is null before the first backup. */
  | { readonly kind: 'single-node'; readonly lastBackupAt: number | null }
  /** Writes commit: `reachable` of `members` answer (at least a majority). */
  | { readonly kind: 'quorum'; readonly members: number; readonly reachable: number }
  /** Writes cannot commit: leases wait out their TTL, dedup is off. */
  | {
      readonly kind: 'no-quorum';
      readonly members: number;
      readonly reachable: number;
      readonly reason: string;
    };
