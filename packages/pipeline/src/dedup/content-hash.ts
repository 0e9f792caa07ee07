import { hash } from 'node:crypto';
import type { PackedValues, SourceRecord } from '@thalweg/connector-core';
import type { DedupConfig } from './dedup-config.js';
import { FieldScanner } from './field-scan.js';

/** Bytes of a content hash: SHA-256 truncated to 128 bits. */
export const CONTENT_HASH_BYTES = 16;

/** What is hashed of each record: the declared fields of its JSON value, or the whole payload. */
export type HashKey = DedupConfig['key'];

/**
 * What one value's content hash digests: the declared fields of its JSON
 * value (their values, in the declared order, as `JSON.stringify` writes
 * the array of them) or the whole payload; null when a declared field
 * cannot be read (or a payload-keyed record is a tombstone), and such a
 * record is never dropped. Fields holding objects hash as written, so the
 * same object with its keys in another order reads as different content: a
 * missed dedup, never a drop.
 *
 * Most values are read by the {@link FieldScanner} (no string decoded, no
 * object made); the few it cannot be sure of are parsed, and both give the
 * same input for the same value.
 */
class HashInputs {
  private readonly scanner: FieldScanner | null;
  private scratch = new Uint8Array(1024);

  constructor(private readonly key: HashKey) {
    this.scanner = key === 'payload' ? null : new FieldScanner(key.fields);
  }

  input(value: Uint8Array, tombstone: boolean): Uint8Array | string | null {
    const key = this.key;
    if (key === 'payload') return tombstone ? null : value;
    const need = value.byteLength + key.fields.length + 1;
    if (this.scratch.byteLength < need) this.scratch = new Uint8Array(need * 2);
    const scanned = (this.scanner as FieldScanner).scan(value, this.scratch);
    if (scanned === 'none') return null;
    if (scanned !== 'parse') return this.scratch.subarray(0, scanned);
    return parsedInput(key.fields, value);
  }
}

/** The declared fields' values through `JSON.parse`: the input the scanner must match. */
export function parsedInput(fields: readonly string[], value: Uint8Array): string | null {
  let doc: unknown;
  try {
    doc = JSON.parse(utf8.decode(value));
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
  const values: unknown[] = [];
  for (const f of fields) {
    if (!Object.hasOwn(doc, f)) return null;
    values.push((doc as Record<string, unknown>)[f]);
  }
  return JSON.stringify(values);
}

/**
 * Writes the content hash of one value (SHA-256 of its hash input,
 * truncated to CONTENT_HASH_BYTES) into `out` at `at`; false, writing
 * nothing, where the value has none.
 */
function writeContentHash(
  inputs: HashInputs,
  value: Uint8Array,
  tombstone: boolean,
  out: Buffer,
  at: number,
): boolean {
  const input = inputs.input(value, tombstone);
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
  const inputs = new HashInputs(config.key);
  return writeContentHash(inputs, record.value, record.tombstone === true, out, 0)
    ? out.toString('hex')
    : null;
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
  const inputs = new HashInputs(key);
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = packed.ends[i] ?? start;
    const value = packed.bytes.subarray(start, end);
    const tombstone = packed.tombstones[i] === 1;
    if (writeContentHash(inputs, value, tombstone, out, i * CONTENT_HASH_BYTES)) hashed[i] = 1;
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
