import type { SourceBatch, SourceRecord } from '@thalweg/connector-core';
import {
  BINARY_KEY_BYTES,
  KeyTable,
  keyWords,
  type BinaryExpiringSet,
} from '@thalweg/coordination';
import type { Digests } from './hash-thread.js';

/** What deciding one piece against a binary set found. */
export interface BinaryOutcome {
  /** The records delivered: the piece's own array when none was dropped. */
  readonly records: readonly SourceRecord[];
  readonly dropped: number;
  /** New first occurrences the set was told of. */
  readonly remembered: number;
  /** Why the new first occurrences could not be added (the decisions stand), if they could not. */
  readonly unremembered?: unknown;
}

/**
 * Content dedup's decision for one stream against an in-process binary set
 * (mode 1, the fake), on the records' packed digests, with no string and no
 * map entry per record: the piece's records are grouped by hash in a
 * {@link KeyTable} (entries in first-occurrence order, the records of one
 * hash chained in offset order), the distinct hashes looked up in one call,
 * and the new first occurrences added in one call. The same decision as the
 * string path of ContentDedup: per hash, the record at the place the set
 * names (its replay) is kept, or for a new hash the earliest, which becomes
 * the first occurrence; the others are dropped. The set takes each call
 * when made, so nothing is in flight once this returns, and the next
 * piece's lookup sees these adds.
 */
export class BinaryDecision {
  /** Reused piece after piece (decisions of a stream are made one at a time). */
  private readonly groups = new KeyTable(1024);
  private first = new Int32Array(0);
  private last = new Int32Array(0);
  private next = new Int32Array(0);

  constructor(
    private readonly set: BinaryExpiringSet,
    private readonly windowMs: number,
  ) {}

  /**
   * Decides `batch` on its digests (`hashed[i]` 0: record i is passed
   * unchecked). Throws when the set fails the lookup: nothing was decided.
   */
  decide(batch: SourceBatch, { digests, hashed }: Digests): BinaryOutcome {
    const records = batch.records;
    const n = records.length;
    this.reserve(n);
    const { first, last, next, groups } = this;
    groups.clear();
    const words = keyWords(digests, n);
    for (let i = 0; i < n; i++) {
      if (hashed[i] !== 1) continue;
      next[i] = -1;
      const e = groups.insert(words, i);
      if (groups.created) first[e] = i;
      else next[last[e] ?? 0] = i;
      last[e] = i;
    }
    // A cleared table hands out entries 0, 1, ... in insertion order.
    const k = groups.size;
    const distinct = new Uint8Array(k * BINARY_KEY_BYTES);
    for (let e = 0; e < k; e++) groups.copyKey(e, distinct, e * BINARY_KEY_BYTES);
    const seen = this.set.getMany(distinct, k);
    const at = batch.span.partition;
    const fresh = new Uint8Array(k * BINARY_KEY_BYTES);
    const partitions = new Uint32Array(k);
    const offsets = new Float64Array(k);
    let remembered = 0;
    let drop: Uint8Array | null = null;
    let dropped = 0;
    for (let e = 0; e < k; e++) {
      let r = first[e] ?? -1;
      let keep = r;
      if (seen.found[e] === 1) {
        const p = seen.partitions[e];
        const o = seen.offsets[e];
        keep = -1;
        for (let c = r; c >= 0; c = next[c] ?? -1) {
          if (p === at && records[c]?.offset === o) keep = c;
        }
      } else {
        fresh.set(
          distinct.subarray(e * BINARY_KEY_BYTES, (e + 1) * BINARY_KEY_BYTES),
          remembered * BINARY_KEY_BYTES,
        );
        partitions[remembered] = at;
        offsets[remembered++] = records[r]?.offset ?? 0;
      }
      for (; r >= 0; r = next[r] ?? -1) {
        if (r === keep) continue;
        drop ??= new Uint8Array(n);
        drop[r] = 1;
        dropped += 1;
      }
    }
    let unremembered: unknown;
    if (remembered > 0) {
      try {
        this.set.addMany(fresh, remembered, this.windowMs, { partitions, offsets });
      } catch (error) {
        unremembered = error;
      }
    }
    const kept = drop === null ? records : records.filter((_, i) => drop[i] !== 1);
    return {
      records: kept,
      dropped,
      remembered,
      ...(unremembered === undefined ? {} : { unremembered }),
    };
  }

  /** Scratch room for a piece of `n` records. */
  private reserve(n: number): void {
    if (this.next.length >= n) return;
    this.first = new Int32Array(n);
    this.last = new Int32Array(n);
    this.next = new Int32Array(n);
  }
}
