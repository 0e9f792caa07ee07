import type { SourceBatch, SourceRecord } from '@thalweg/connector-core';
import { BINARY_KEY_BYTES, type BinaryExpiringSet } from '@thalweg/coordination';
import type { Digests } from './hash-thread.js';

/** What deciding one piece against a binary set found. */
export interface BinaryOutcome {
  /** The records delivered: the piece's own array when none was dropped. */
  readonly records: readonly SourceRecord[];
  readonly dropped: number;
  /** Records whose hash was new: each is now the first occurrence of its hash. */
  readonly remembered: number;
}

/**
 * Content dedup's decision for one stream against an in-process binary set
 * (mode 1, the fake), on the records' packed digests, with no string and no
 * map entry per record: ONE `claimMany` of the piece's hashed records in
 * offset order answers, per record, the place of its hash's first
 * occurrence, the set's, or its own when the hash was new (it is added
 * then, so a later copy in the same piece finds it). A record is kept
 * exactly when that place is its own: the first occurrence itself (also
 * when replayed) or the earliest record of a new hash. The same decision as
 * the string path of ContentDedup, which groups the piece by hash first.
 * The set takes the call when made, so nothing is in flight once this
 * returns, and the next piece sees these first occurrences.
 */
export class BinaryDecision {
  constructor(
    private readonly set: BinaryExpiringSet,
    private readonly windowMs: number,
  ) {}

  /**
   * Decides `batch` on its digests (`hashed[i]` 0: record i is passed
   * unchecked). Throws when the set fails: nothing was decided.
   */
  decide(batch: SourceBatch, { digests, hashed }: Digests): BinaryOutcome {
    const records = batch.records;
    const n = records.length;
    let m = 0;
    for (let i = 0; i < n; i++) m += hashed[i] ?? 0;
    // The hashed records' digests, packed: the piece's own when every record has one.
    const keys = m === n ? digests : packHashed(digests, hashed, m);
    const at = batch.span.partition;
    const partitions = new Uint32Array(m).fill(at);
    const offsets = new Float64Array(m);
    for (let i = 0, j = 0; i < n; i++) {
      if (hashed[i] === 1) offsets[j++] = records[i]?.offset ?? 0;
    }
    const first = this.set.claimMany(keys, m, this.windowMs, { partitions, offsets });
    let drop: Uint8Array | null = null;
    let dropped = 0;
    let remembered = 0;
    for (let i = 0, j = 0; i < n; i++) {
      if (hashed[i] !== 1) continue;
      if (first.found[j] !== 1) remembered += 1;
      else if (first.partitions[j] !== at || first.offsets[j] !== offsets[j]) {
        drop ??= new Uint8Array(n);
        drop[i] = 1;
        dropped += 1;
      }
      j += 1;
    }
    const kept = drop === null ? records : records.filter((_, i) => drop[i] !== 1);
    return { records: kept, dropped, remembered };
  }
}

/** The digests of the records with one, in order, packed. */
function packHashed(digests: Uint8Array, hashed: Uint8Array, m: number): Uint8Array {
  const out = new Uint8Array(m * BINARY_KEY_BYTES);
  for (let i = 0, j = 0; i < hashed.length; i++) {
    if (hashed[i] !== 1) continue;
    out.set(
      digests.subarray(i * BINARY_KEY_BYTES, (i + 1) * BINARY_KEY_BYTES),
      j++ * BINARY_KEY_BYTES,
    );
  }
  return out;
}
