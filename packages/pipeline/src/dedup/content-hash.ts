import { hash } from 'node:crypto';
import type { SourceRecord } from '@thalweg/connector-core';
import type { DedupConfig } from './dedup-config.js';

/** Bytes of a content hash: SHA-256 truncated to 128 bits. */
export const CONTENT_HASH_BYTES = 16;

/** What is hashed of each record: the declared fields of its JSON value, or the whole payload. */
export type HashKey = DedupConfig['key'];

/**
 * What one value's content hash digests: the declared fields of its JSON
 * value (their values, in the declared order) or the whole payload; null
 * when a declared field cannot be read (or a payload-keyed record is a
 * tombstone), and such a record is never dropped. Fields holding objects
 * hash as written, so the same object with its keys in another order reads
 * as different content: a missed dedup, never a drop.
 */
function hashInput(
  key: HashKey,
  value: Uint8Array,
  tombstone: boolean,
): Uint8Array | string | null {
  let input: Uint8Array | string;
  if (key === 'payload') {
    if (tombstone) return null;
    input = value;
  } else {
    let doc: unknown;
    try {
      doc = JSON.parse(utf8.decode(value));
    } catch {
      return null;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
    const values: unknown[] = [];
    for (const f of key.fields) {
      if (!Object.hasOwn(doc, f)) return null;
      values.push((doc as Record<string, unknown>)[f]);
    }
    input = JSON.stringify(values);
  }
  return input;
}

/**
 * Writes the content hash of one value (SHA-256 of {@link hashInput},
 * truncated to CONTENT_HASH_BYTES) into `out` at `at`; false, writing
 * nothing, where the value has none.
 */
function writeContentHash(
  key: HashKey,
  value: Uint8Array,
  tombstone: boolean,
  out: Buffer,
  at: number,
): boolean {
  const input = hashInput(key, value, tombstone);
  if (input === null) return false;
  // The one-shot digest (for a few hundred bytes a Hash object's set-up
  // dominates), as 'binary' (latin1): one character per byte, written straight into
  // `out`, so no Buffer is made per digest.
  out.write(hash('sha256', input, 'binary'), at, CONTENT_HASH_BYTES, 'latin1');
  return true;
}

/** The content hash of a record, hex (the string set's key); null where it has none. */
export function contentHash(config: DedupConfig, record: SourceRecord): string | null {
  const out = Buffer.alloc(CONTENT_HASH_BYTES);
  return writeContentHash(config.key, record.value, record.tombstone === true, out, 0)
    ? out.toString('hex')
    : null;
}

/**
 * A piece's values laid out for hashing in one go (on this thread or the
 * hash thread): `bytes` holds them one after another, value i ending at
 * `ends[i]`, and `tombstones[i]` is 1 for a tombstone.
 */
export interface PackedValues {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly ends: Uint32Array<ArrayBuffer>;
  readonly tombstones: Uint8Array<ArrayBuffer>;
}

export function packValues(records: readonly SourceRecord[]): PackedValues {
  let total = 0;
  for (const r of records) total += r.value.byteLength;
  const bytes = new Uint8Array(total);
  const ends = new Uint32Array(records.length);
  const tombstones = new Uint8Array(records.length);
  let at = 0;
  records.forEach((r, i) => {
    bytes.set(r.value, at);
    at += r.value.byteLength;
    ends[i] = at;
    tombstones[i] = r.tombstone === true ? 1 : 0;
  });
  return { bytes, ends, tombstones };
}

/**
 * The hashes of packed values: CONTENT_HASH_BYTES per value in `digests`,
 * and `hashed[i]` 0 where value i has none (see {@link contentHashOf}).
 */
export function hashPacked(
  key: HashKey,
  packed: PackedValues,
): { digests: Uint8Array<ArrayBuffer>; hashed: Uint8Array<ArrayBuffer> } {
  const n = packed.ends.length;
  const digests = new Uint8Array(n * CONTENT_HASH_BYTES);
  const out = Buffer.from(digests.buffer);
  const hashed = new Uint8Array(n);
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = packed.ends[i] ?? start;
    const value = packed.bytes.subarray(start, end);
    const tombstone = packed.tombstones[i] === 1;
    if (writeContentHash(key, value, tombstone, out, i * CONTENT_HASH_BYTES)) hashed[i] = 1;
    start = end;
  }
  return { digests, hashed };
}

/** Hex keys of {@link hashPacked}'s result, null where a value has none. */
export function hexKeys(digests: Uint8Array, hashed: Uint8Array): (string | null)[] {
  const b = Buffer.from(digests.buffer, digests.byteOffset, digests.byteLength);
  const keys: (string | null)[] = new Array<string | null>(hashed.length);
  for (let i = 0; i < hashed.length; i++) {
    keys[i] =
      hashed[i] === 1
        ? b.toString('hex', i * CONTENT_HASH_BYTES, (i + 1) * CONTENT_HASH_BYTES)
        : null;
  }
  return keys;
}

const utf8 = new TextDecoder();
