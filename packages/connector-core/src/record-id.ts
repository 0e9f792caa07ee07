import { createHash, hash } from 'node:crypto';
import { InvalidInputError } from './errors.js';
import { checkOffset, sourcePartition } from './offset-span.js';

/** The column every sink stores the record id in. */
export const RECORD_ID_COLUMN = '_twg_record_id';

/** Bytes of a record id: the first 128 bits of a SHA-256 digest. */
export const RECORD_ID_BYTES = 16;

/** Up to this payload size the layout is hashed from one reused buffer. */
const SMALL_PAYLOAD = 16 * 1024;

/** Domain tag and layout version: ASCII "twg.rid1". */
const DOMAIN_TAG = Buffer.from('twg.rid1', 'ascii');

/** With the u flag a surrogate pair is one code point, so this matches only unpaired ones. */
const LONE_SURROGATE = /\p{Surrogate}/u;

export interface RecordIdInput {
  readonly cluster: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly payload: Uint8Array;
}

/**
 * The deterministic record id `_twg_record_id`, identical across processes,
 * restarts and implementations. A redelivered record arrives at the same
 * position with the same payload and so gets the same id, which is what makes
 * replay idempotent in every sink.
 *
 * Byte layout hashed (all integers big-endian, every variable field length-
 * prefixed so that no two inputs share an encoding):
 *
 * | bytes | field                                      |
 * |-------|--------------------------------------------|
 * | 8     | domain tag, ASCII `twg.rid1`               |
 * | 2     | u16 length of `cluster` in UTF-8 bytes     |
 * | n     | `cluster`, UTF-8                           |
 * | 2     | u16 length of `topic` in UTF-8 bytes       |
 * | m     | `topic`, UTF-8                             |
 * | 4     | u32 `partition`                            |
 * | 8     | u64 `offset`                               |
 * | 8     | u64 length of `payload`                    |
 * | p     | `payload`                                  |
 *
 * id = SHA-256(layout)[0..16]. Hex form: 32 lower-case hex digits.
 *
 * SHA-256 rather than a faster non-cryptographic hash because sinks drop a
 * row whose id they already hold (`ON CONFLICT DO NOTHING`): a collision is a
 * lost record, so collision resistance is part of the guarantee. Node's
 * OpenSSL binding uses the CPU's SHA extensions where present (see the bench).
 */
export function recordId(input: RecordIdInput): Buffer {
  return new RecordIdHasher(input.cluster, input.topic, input.partition).id(
    input.offset,
    input.payload,
  );
}

export function recordIdHex(input: RecordIdInput): string {
  return recordId(input).toString('hex');
}

/**
 * Hashes record ids for one partition: the cluster/topic/partition prefix is
 * encoded once, so the per-record cost is the digest of 16 bytes plus the
 * payload.
 */
export class RecordIdHasher {
  private readonly prefix: Buffer;
  private readonly tail = Buffer.alloc(16);
  /** prefix | tail | payload laid out once, for payloads up to SMALL_PAYLOAD. */
  private scratch: Buffer;

  constructor(cluster: string, topic: string, partition: number) {
    sourcePartition(topic, partition);
    const c = encodeName(cluster, 'cluster');
    const t = encodeName(topic, 'topic');
    const prefix = Buffer.alloc(DOMAIN_TAG.length + 2 + c.length + 2 + t.length + 4);
    let at = DOMAIN_TAG.copy(prefix, 0);
    at = prefix.writeUInt16BE(c.length, at);
    at += c.copy(prefix, at);
    at = prefix.writeUInt16BE(t.length, at);
    at += t.copy(prefix, at);
    prefix.writeUInt32BE(partition, at);
    this.prefix = prefix;
    this.scratch = Buffer.alloc(prefix.length + 16 + 512);
    prefix.copy(this.scratch, 0);
  }

  id(offset: number, payload: Uint8Array): Buffer {
    return Buffer.from(this.digest(offset, payload, 'binary'), 'latin1').subarray(
      0,
      RECORD_ID_BYTES,
    );
  }

  /**
   * Writes the id into `out` at `at`: RECORD_ID_BYTES raw bytes, or their
   * 2 x RECORD_ID_BYTES lower-case hex digits (ASCII). No Buffer is made per
   * id, which is most of what a one-shot digest costs for a small payload;
   * a column of ids is written straight into its data buffer this way.
   */
  writeId(
    offset: number,
    payload: Uint8Array,
    encoding: 'hex' | 'binary',
    out: Buffer,
    at: number,
  ): void {
    if (encoding === 'hex') {
      out.write(this.digest(offset, payload, 'hex'), at, 2 * RECORD_ID_BYTES, 'latin1');
    } else {
      out.write(this.digest(offset, payload, 'binary'), at, RECORD_ID_BYTES, 'latin1');
    }
  }

  /** SHA-256 of the layout as a string: 'binary' one character per byte, or 'hex'. */
  private digest(offset: number, payload: Uint8Array, as: 'hex' | 'binary'): string {
    checkOffset(offset, 'offset');
    if (payload.byteLength <= SMALL_PAYLOAD) return this.digestSmall(offset, payload, as);
    const tail = this.tail;
    // Two u32 halves instead of BigInt: both values are safe integers.
    tail.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), 0);
    tail.writeUInt32BE(offset >>> 0, 4);
    tail.writeUInt32BE(Math.floor(payload.byteLength / 0x1_0000_0000), 8);
    tail.writeUInt32BE(payload.byteLength >>> 0, 12);
    return createHash('sha256').update(this.prefix).update(tail).update(payload).digest(as);
  }

  /**
   * Small payloads: one contiguous buffer and the one-shot digest, because
   * for a few hundred bytes the per-call cost of a Hash object dominates.
   * The digest comes back as a string: a Buffer result costs about twice as
   * much per call.
   */
  private digestSmall(offset: number, payload: Uint8Array, as: 'hex' | 'binary'): string {
    const head = this.prefix.length;
    const length = head + 16 + payload.byteLength;
    if (this.scratch.length < length) {
      const grown = Buffer.alloc(head + 16 + SMALL_PAYLOAD);
      this.prefix.copy(grown, 0);
      this.scratch = grown;
    }
    const s = this.scratch;
    s.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), head);
    s.writeUInt32BE(offset >>> 0, head + 4);
    s.writeUInt32BE(0, head + 8);
    s.writeUInt32BE(payload.byteLength, head + 12);
    s.set(payload, head + 16);
    return hash('sha256', s.subarray(0, length), as);
  }

  hex(offset: number, payload: Uint8Array): string {
    return this.id(offset, payload).toString('hex');
  }
}

function encodeName(value: string, field: 'cluster' | 'topic'): Buffer {
  if (value.length === 0) {
    throw new InvalidInputError('TWG_RECORD_ID_INPUT_INVALID', field, 'must not be empty');
  }
  // UTF-8 writes every lone surrogate as U+FFFD, so two different names would
  // share one encoding and every record id: a collision sinks drop as a duplicate.
  if (LONE_SURROGATE.test(value)) {
    throw new InvalidInputError(
      'TWG_RECORD_ID_INPUT_INVALID',
      field,
      'contains a lone surrogate, which UTF-8 cannot encode as written',
    );
  }
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > 0xffff) {
    throw new InvalidInputError(
      'TWG_RECORD_ID_INPUT_INVALID',
      field,
      `is ${bytes.length} UTF-8 bytes; at most 65535 are allowed`,
    );
  }
  return bytes;
}
