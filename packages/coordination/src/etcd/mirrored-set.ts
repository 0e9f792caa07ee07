import { randomBytes } from 'node:crypto';
import type { Etcd3, IKeyValue } from 'etcd3';
import type { ExpiringSet } from '../coordination.js';
import { CoordinationError } from '../errors.js';
import { checkKeys, checkTtl, checkValues } from '../input.js';
import { ReusedLease } from './reused-lease.js';
import { WatchedPrefix } from './watched-prefix.js';

/** What a mirrored set needs of its coordination. */
export interface MirrorDeps {
  readonly client: Etcd3;
  /** The set's key prefix, `<namespace>set/<name>/`. */
  readonly prefix: string;
  readonly maxEntries: number;
  /** Runs an etcd call, its failure turned into TWG_COORDINATION_UNAVAILABLE. */
  readonly call: <T>(what: string, run: () => Promise<T>) => Promise<T>;
  /** Whether the cluster has a quorum now (the coordination's health). */
  readonly quorate: () => boolean;
  /** An etcd lease of `seconds`, its id. */
  readonly grant: (seconds: number) => Promise<string>;
  readonly now: () => number;
}

/** Largest value one etcd put carries: below etcd's default 1.5 MiB request bound. */
const MAX_PIECE_BYTES = 512 * 1024;

interface Entry {
  readonly value: string;
  readonly expiresAt: number;
  /** The etcd key (piece) it came in, and that piece's revision. */
  readonly piece: string;
  readonly revision: bigint;
}

interface Piece {
  readonly keys: readonly string[];
  /** Its keys whose latest value is still this piece's. */
  live: number;
}

/** A piece's value: when its keys expire (the writer's clock), and key, value, key, value, … */
interface PieceValue {
  readonly expiresAt: number;
  readonly entries: readonly string[];
}

/**
 * An expiring set on etcd that every process holds a copy of (ADR 0037).
 * A bulk add is ONE etcd key (a piece, several past MAX_PIECE_BYTES)
 * holding all its keys and values, attached to an etcd lease of the TTL; a
 * lookup reads the copy, kept current by a watch on the set's prefix and
 * loaded whole by the first call. So a batch costs one Raft write and no
 * read round trip, where a key per hash cost thousands of each.
 *
 * Exact either way: the copy holds only keys some process wrote, the latest
 * value by revision wins, and expiry (the writer's TTL, and etcd deleting
 * the piece with its lease) only removes. What the copy may lag is another
 * process's newest writes, by the watch's delay: a duplicate racing across
 * processes passes, as it could before. While the cluster has no quorum or
 * the watch is down, lookups fail (dedup goes off) rather than answer from
 * a copy nobody keeps current. The size bound evicts this copy's oldest
 * keys, and deletes a piece from etcd once none of its keys is live here:
 * across processes it is best effort, as the set's contract says.
 */
export class MirroredSet implements ExpiringSet {
  private readonly entries = new Map<string, Entry>();
  private readonly pieces = new Map<string, Piece>();
  private readonly watched: WatchedPrefix;
  private readonly lease: ReusedLease;
  private readonly writer = randomBytes(6).toString('hex');
  private written = 0;

  constructor(private readonly d: MirrorDeps) {
    this.watched = new WatchedPrefix(d.client, d.prefix, {
      loaded: (kvs) => {
        this.entries.clear();
        this.pieces.clear();
        for (const kv of kvs) this.applyKv(kv);
      },
      put: (kv) => {
        this.applyKv(kv);
      },
      deleted: (key) => {
        this.remove(key);
      },
    });
    this.lease = new ReusedLease(d.grant, d.now);
  }

  hasMany(keys: readonly string[]): Promise<boolean[]> {
    return this.lookUp(keys, (e) => e !== null);
  }

  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return this.lookUp(keys, (e) => e?.value ?? null);
  }

  addMany(keys: readonly string[], ttlMs: number, values?: readonly string[]): Promise<void> {
    return this.d.call('adding keys', async () => {
      checkKeys(keys);
      checkTtl(ttlMs);
      checkValues(keys, values);
      if (keys.length === 0) return;
      await this.watched.ready();
      const expiresAt = this.d.now() + ttlMs;
      const lease = await this.lease.for(ttlMs);
      await Promise.all(
        pieces(keys, values).map(async (entries) => {
          const key = `${this.d.prefix}${this.writer}-${(this.written++).toString(36)}`;
          const body = JSON.stringify({ expiresAt, entries } satisfies PieceValue);
          const res = await this.d.client.put(key).value(body).lease(lease).exec();
          // Applied at once: this process's next lookup sees it without the watch.
          this.apply(key, BigInt(res.header.revision), { expiresAt, entries });
        }),
      );
    });
  }

  size(): Promise<number> {
    return this.d.call('counting a set', async () => {
      await this.watched.ready();
      return this.entries.size;
    });
  }

  close(): void {
    this.watched.close();
  }

  private lookUp<T>(keys: readonly string[], answer: (e: Entry | null) => T): Promise<T[]> {
    return this.d.call('looking keys up', async () => {
      checkKeys(keys);
      await this.watched.ready();
      if (!this.d.quorate() || !this.watched.current) {
        throw new CoordinationError(
          'TWG_COORDINATION_UNAVAILABLE',
          `etcd: the set under ${this.d.prefix} is not kept current (${this.watched.current ? 'no quorum' : 'its watch is down'})`,
        );
      }
      const now = this.d.now();
      return keys.map((k) => {
        const e = this.entries.get(k);
        return answer(e !== undefined && e.expiresAt > now ? e : null);
      });
    });
  }

  private applyKv(kv: IKeyValue): void {
    let value: PieceValue;
    try {
      value = JSON.parse(kv.value.toString('utf8')) as PieceValue;
    } catch {
      return; // Not a piece: nothing in it is a key of the set.
    }
    if (!Array.isArray(value.entries) || typeof value.expiresAt !== 'number') return;
    this.apply(kv.key.toString('utf8'), BigInt(kv.mod_revision), value);
  }

  private apply(piece: string, revision: bigint, value: PieceValue): void {
    if (this.pieces.has(piece)) return;
    const keys: string[] = [];
    const held: Piece = { keys, live: 0 };
    this.pieces.set(piece, held);
    const { entries, expiresAt } = value;
    for (let i = 0; i + 1 < entries.length; i += 2) {
      const key = String(entries[i]);
      keys.push(key);
      const old = this.entries.get(key);
      // A write the copy already holds a newer one of (the watch delivering late) changes nothing.
      if (old !== undefined && old.revision > revision) continue;
      if (old !== undefined) this.release(old.piece);
      this.entries.delete(key);
      this.entries.set(key, { value: String(entries[i + 1]), expiresAt, piece, revision });
      held.live += 1;
    }
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.d.maxEntries) break;
      this.entries.delete(key);
      this.release(e.piece);
    }
  }

  /** One key of `piece` is no longer its: once none is, the piece goes from etcd too. */
  private release(piece: string): void {
    const p = this.pieces.get(piece);
    if (p === undefined) return;
    p.live -= 1;
    if (p.live > 0) return;
    this.pieces.delete(piece);
    void this.d.client
      .delete()
      .key(piece)
      .exec()
      .catch(() => undefined);
  }

  /** etcd deleted `piece` (its lease ended, or a process evicted it): its keys go. */
  private remove(piece: string): void {
    const p = this.pieces.get(piece);
    if (p === undefined) return;
    this.pieces.delete(piece);
    for (const key of p.keys) if (this.entries.get(key)?.piece === piece) this.entries.delete(key);
  }
}

/** `keys` and their values as flat key, value lists of at most MAX_PIECE_BYTES of JSON each. */
function pieces(keys: readonly string[], values?: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  keys.forEach((k, i) => {
    const v = values?.[i] ?? '';
    // JSON escapes can only lengthen a string: a bound on the piece's size, up to escapes.
    const cost = Buffer.byteLength(k) + Buffer.byteLength(v) + 6;
    if (current.length > 0 && bytes + cost > MAX_PIECE_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(k, v);
    bytes += cost;
  });
  if (current.length > 0) out.push(current);
  return out;
}
