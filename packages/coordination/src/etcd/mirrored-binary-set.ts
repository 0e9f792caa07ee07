import { randomBytes } from 'node:crypto';
import type { Etcd3, IKeyValue } from 'etcd3';
import type { BinaryExpiringSet, BinaryLookup, Places } from '../coordination.js';
import { CoordinationError } from '../errors.js';
import { checkTtl } from '../input.js';
import { BinarySet, type EntryHooks } from '../memory/binary-set.js';
import { BINARY_KEY_BYTES, keyWords } from '../memory/key-table.js';
import { checkedWords, checkPlaces } from '../memory/memory-coordination.js';
import { decodePiece, encodePiece, MAX_PIECE_KEYS, type BinaryPiece } from './binary-piece.js';
import { PieceWriter, type PieceWrite, type Unwritten } from './piece-writer.js';
import { ReusedLease } from './reused-lease.js';
import { WatchedPrefix } from './watched-prefix.js';

/** What a mirrored binary set needs of its coordination. */
export interface BinaryMirrorDeps {
  readonly client: Etcd3;
  /** The set's key prefix, `<namespace>bset/<name>/`: apart from the string set of the name. */
  readonly prefix: string;
  readonly maxEntries: number;
  /** Whether the cluster has a quorum now (the coordination's health). */
  readonly quorate: () => boolean;
  /** An etcd lease of `seconds`, its id. */
  readonly grant: (seconds: number) => Promise<string>;
  readonly now: () => number;
}

/** The revision of an entry added here whose piece etcd has not confirmed yet: newer than any. */
const UNCONFIRMED = Infinity;

/** One etcd key of the set, as the copy knows it. */
interface Piece {
  readonly key: string;
  /** Its keys as words (see keyWords): to find its entries again. */
  words: Int32Array;
  count: number;
  /** Its keys whose latest place in the copy is still this piece's. */
  live: number;
}

/**
 * The binary expiring set on etcd (ADR 0037, amended): every process holds
 * a copy, mode 1's {@link BinarySet} with two more columns per entry (the
 * piece that wrote the key, and that piece's revision), so lookups and
 * claims answer from it synchronously and allocate nothing per key. A
 * `claimMany` adds its new keys to the copy at once and writes them as ONE
 * etcd key (several past MAX_PIECE_KEYS) holding their packed digests,
 * places and expiry (binary-piece.ts), on a reused etcd lease of the TTL,
 * in the background and in call order (piece-writer.ts). Other processes'
 * pieces arrive by the watch on the prefix, after a load of the whole
 * prefix on first use (watched-prefix.ts).
 *
 * Exact as the string MirroredSet is: the copy holds only keys some process
 * wrote (or this one claimed), the latest revision wins (a piece of this
 * process not yet confirmed counts as newest), and expiry, eviction and
 * etcd deleting a piece only remove. While the copy is loading, the cluster
 * has no quorum or the watch is down, every call throws
 * TWG_COORDINATION_UNAVAILABLE (dedup goes off) rather than answer from a
 * copy nobody keeps current. A write that fails stays held here, reads as
 * the oldest revision, and is told to `onUnwritten`; it never throws into
 * the caller.
 */
export class MirroredBinarySet {
  private readonly hooks: EntryHooks = {
    widen: (capacity) => {
      const owners = new Int32Array(capacity);
      owners.set(this.owners);
      this.owners = owners;
      const revisions = new Float64Array(capacity);
      revisions.set(this.revisions);
      this.revisions = revisions;
    },
    filled: (e, replaced) => {
      if (replaced) this.release(this.owners[e] ?? -1);
      this.owners[e] = this.fillOwner;
      this.revisions[e] = this.fillRevision;
      this.fillPiece.live += 1;
    },
    removing: (e) => {
      this.release(this.owners[e] ?? -1);
    },
  };
  private set: BinarySet;
  private owners: Int32Array;
  private revisions: Float64Array;
  /** The piece (its number, its revision) `hooks.filled` gives the entries being filled. */
  private fillOwner = -1;
  private fillPiece: Piece = { key: '', words: new Int32Array(0), count: 0, live: 0 };
  private fillRevision = 0;
  private readonly pieces = new Map<number, Piece>();
  private readonly indexOf = new Map<string, number>();
  private nextPiece = 0;
  private readonly watched: WatchedPrefix;
  private readonly writer: PieceWriter;
  private readonly id = randomBytes(6).toString('hex');
  private written = 0;
  private closed = false;

  constructor(private readonly d: BinaryMirrorDeps) {
    this.set = new BinarySet(8, undefined, this.hooks);
    this.owners = new Int32Array(this.set.capacity);
    this.revisions = new Float64Array(this.set.capacity);
    this.watched = new WatchedPrefix(d.client, d.prefix, {
      loaded: (kvs) => {
        this.reload(kvs);
      },
      put: (kv) => {
        this.applyKv(kv);
      },
      deleted: (key) => {
        this.removePiece(key);
      },
    });
    this.writer = new PieceWriter(d.client, new ReusedLease(d.grant, d.now), {
      confirmed: (w, revision) => {
        this.confirmed(w, revision);
      },
      failed: (w) => {
        this.setRevision(w.index, 0);
      },
    });
    // The first use: the copy starts loading now.
    void this.watched.ready().catch(() => undefined);
  }

  /** A handle on the set whose unwritten adds are told to `onUnwritten`. */
  handle(onUnwritten?: Unwritten): BinaryExpiringSet {
    return {
      ready: () => this.watched.ready(),
      flushed: () => this.writer.flushed(),
      getMany: (keys, count) => this.getMany(keys, count),
      addMany: (keys, count, ttlMs, places) => {
        this.add(keys, count, ttlMs, places, false, onUnwritten);
      },
      claimMany: (keys, count, ttlMs, places) =>
        this.add(keys, count, ttlMs, places, true, onUnwritten),
      size: () => {
        this.usable();
        return this.set.size;
      },
    };
  }

  /** Stops the watch; writes not started are dropped (told as unwritten), the one in flight is waited for. */
  async close(): Promise<void> {
    this.closed = true;
    this.watched.close();
    await this.writer.close();
  }

  private getMany(keys: Uint8Array, count: number): BinaryLookup {
    const words = checkedWords(keys, count);
    this.usable();
    return this.set.getMany(words, count, this.d.now());
  }

  /** A claim (`claim`) or an add of `count` keys, in pieces of at most MAX_PIECE_KEYS. */
  private add(
    keys: Uint8Array,
    count: number,
    ttlMs: number,
    places: Places,
    claim: boolean,
    told: Unwritten | undefined,
  ): BinaryLookup {
    const words = checkedWords(keys, count);
    checkTtl(ttlMs);
    checkPlaces(places, count);
    this.usable();
    const now = this.d.now();
    if (count <= MAX_PIECE_KEYS) {
      return this.addPiece(words, count, places, now, ttlMs, claim, told);
    }
    const found = new Uint8Array(count);
    const partitions = new Uint32Array(count);
    const offsets = new Float64Array(count);
    for (let from = 0; from < count; from += MAX_PIECE_KEYS) {
      const n = Math.min(MAX_PIECE_KEYS, count - from);
      const part = this.addPiece(
        words.subarray(from * 4, (from + n) * 4),
        n,
        {
          partitions: places.partitions.subarray(from, from + n),
          offsets: places.offsets.subarray(from, from + n),
        },
        now,
        ttlMs,
        claim,
        told,
      );
      found.set(part.found, from);
      partitions.set(part.partitions, from);
      offsets.set(part.offsets, from);
    }
    return { found, partitions, offsets };
  }

  /** Adds (or claims) `n` keys as one piece of this process, and queues its write. */
  private addPiece(
    words: Int32Array,
    n: number,
    places: Places,
    now: number,
    ttlMs: number,
    claim: boolean,
    told: Unwritten | undefined,
  ): BinaryLookup {
    const index = this.nextPiece++;
    const key = `${this.d.prefix}${this.id}-${(this.written++).toString(36)}`;
    this.fillPiece = { key, words: new Int32Array(0), count: 0, live: 0 };
    this.pieces.set(index, this.fillPiece);
    this.indexOf.set(key, index);
    this.fillOwner = index;
    this.fillRevision = UNCONFIRMED;
    const max = this.d.maxEntries;
    let answer: BinaryLookup;
    if (claim) {
      answer = this.set.claimMany(words, n, now, now + ttlMs, places, max);
    } else {
      for (let i = 0; i < n; i++) {
        this.set.put(words, i, now + ttlMs, places.partitions[i] ?? 0, places.offsets[i] ?? 0);
      }
      this.set.evict(max);
      answer = { found: new Uint8Array(n), partitions: places.partitions, offsets: places.offsets };
    }
    const piece = this.pieces.get(index);
    if (piece === undefined || piece.live === 0) {
      // Nothing new (every key held), or all of it evicted at once: nothing to write.
      this.pieces.delete(index);
      this.indexOf.delete(key);
      return answer;
    }
    const value = encodeAdded(words, n, places, answer.found, now + ttlMs);
    const decoded = decodePiece(value) as BinaryPiece;
    piece.words = keyWords(decoded.keys, decoded.count);
    piece.count = decoded.count;
    this.writer.write({ index, key, value, count: decoded.count, ttlMs, told });
    return answer;
  }

  /** Throws unless the copy is kept current: loaded, watched, and the cluster has a quorum. */
  private usable(): void {
    if (this.closed) {
      throw new CoordinationError('TWG_COORDINATION_CLOSED', 'the coordination was closed');
    }
    if (!this.watched.current) {
      // Loading (again) in the background; a later call finds it done.
      void this.watched.ready().catch(() => undefined);
      throw new CoordinationError(
        'TWG_COORDINATION_UNAVAILABLE',
        `etcd: the binary set under ${this.d.prefix} is not kept current (its copy is loading or its watch is down)`,
      );
    }
    if (!this.d.quorate()) {
      throw new CoordinationError(
        'TWG_COORDINATION_UNAVAILABLE',
        `etcd: the binary set under ${this.d.prefix} is not kept current (no quorum)`,
      );
    }
  }

  /** The copy starts again from the whole prefix, and this process's writes not confirmed yet. */
  private reload(kvs: readonly IKeyValue[]): void {
    this.set = new BinarySet(8, undefined, this.hooks);
    this.owners = new Int32Array(this.set.capacity);
    this.revisions = new Float64Array(this.set.capacity);
    this.pieces.clear();
    this.indexOf.clear();
    for (const kv of kvs) this.applyKv(kv);
    for (const w of this.writer.unconfirmed()) {
      const piece = decodePiece(w.value);
      if (piece !== null) this.applyPiece(w.key, w.index, UNCONFIRMED, piece);
    }
  }

  private applyKv(kv: IKeyValue): void {
    const key = kv.key.toString('utf8');
    // Held already: this process's own piece, seen again by the watch.
    if (this.indexOf.has(key)) return;
    const piece = decodePiece(kv.value);
    // Not a piece of this version (a foreign or garbage value): nothing in it is a key of the set.
    if (piece === null) return;
    this.applyPiece(key, this.nextPiece++, Number(kv.mod_revision), piece);
  }

  /** A piece into the copy: each key takes its place unless the copy holds a newer revision of it. */
  private applyPiece(key: string, index: number, revision: number, piece: BinaryPiece): void {
    if (this.indexOf.has(key) || piece.expiresAt <= this.d.now()) return;
    const words = keyWords(piece.keys, piece.count);
    this.fillPiece = { key, words, count: piece.count, live: 0 };
    this.pieces.set(index, this.fillPiece);
    this.indexOf.set(key, index);
    this.fillOwner = index;
    this.fillRevision = revision;
    for (let i = 0; i < piece.count; i++) {
      const e = this.set.find(words, i);
      // A write the copy already holds a newer one of (the watch delivering late) changes nothing.
      if (e >= 0 && (this.revisions[e] ?? 0) > revision) continue;
      this.set.put(words, i, piece.expiresAt, piece.partitions[i] ?? 0, piece.offsets[i] ?? 0);
    }
    this.set.evict(this.d.maxEntries);
  }

  /** One key of piece `index` is no longer its: once none is, the piece goes from etcd too. */
  private release(index: number): void {
    const p = this.pieces.get(index);
    if (p === undefined) return;
    p.live -= 1;
    if (p.live > 0) return;
    this.pieces.delete(index);
    this.indexOf.delete(p.key);
    // A piece still being written is deleted once its write is done (`confirmed`).
    if (!this.writer.pending(index)) this.deleteFromEtcd(p.key);
  }

  /** etcd deleted piece `key` (its lease ended, or a process evicted it): its keys go. */
  private removePiece(key: string): void {
    const index = this.indexOf.get(key);
    if (index === undefined) return;
    const p = this.pieces.get(index);
    this.indexOf.delete(key);
    this.pieces.delete(index);
    if (p === undefined) return;
    for (let i = 0; i < p.count; i++) {
      const e = this.set.find(p.words, i);
      if (e >= 0 && this.owners[e] === index) this.set.remove(e);
    }
  }

  private confirmed(w: PieceWrite, revision: number): void {
    if (!this.pieces.has(w.index)) {
      // Every key of it was evicted while it was written: it goes from etcd too (unless a
      // reload found it written already, and holds it as loaded).
      if (!this.indexOf.has(w.key)) this.deleteFromEtcd(w.key);
      return;
    }
    this.setRevision(w.index, revision);
  }

  /** The entries piece `index` still holds take `revision`. */
  private setRevision(index: number, revision: number): void {
    const p = this.pieces.get(index);
    if (p === undefined) return;
    for (let i = 0; i < p.count; i++) {
      const e = this.set.find(p.words, i);
      if (e >= 0 && this.owners[e] === index) this.revisions[e] = revision;
    }
  }

  private deleteFromEtcd(key: string): void {
    if (this.closed) return;
    void this.d.client
      .delete()
      .key(key)
      .exec()
      .catch(() => undefined);
  }
}

/** The keys of a call that were added (`found[i]` 0), their places and expiry, as one piece's value. */
function encodeAdded(
  words: Int32Array,
  n: number,
  places: Places,
  found: Uint8Array,
  expiresAt: number,
): Uint8Array {
  const bytes = new Uint8Array(words.buffer, words.byteOffset, n * BINARY_KEY_BYTES);
  let m = 0;
  for (let i = 0; i < n; i++) m += found[i] === 1 ? 0 : 1;
  if (m === n) return encodePiece(bytes, places.partitions, places.offsets, 0, n, expiresAt);
  const keys = new Uint8Array(m * BINARY_KEY_BYTES);
  const partitions = new Uint32Array(m);
  const offsets = new Float64Array(m);
  for (let i = 0, j = 0; i < n; i++) {
    if (found[i] === 1) continue;
    keys.set(
      bytes.subarray(i * BINARY_KEY_BYTES, (i + 1) * BINARY_KEY_BYTES),
      j * BINARY_KEY_BYTES,
    );
    partitions[j] = places.partitions[i] ?? 0;
    offsets[j++] = places.offsets[i] ?? 0;
  }
  return encodePiece(keys, partitions, offsets, 0, m, expiresAt);
}
