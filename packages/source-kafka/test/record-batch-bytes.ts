/**
 * Kafka record batches (message format v2) encoded for tests, field by
 * field as the protocol guide lays them out, so the decoder is tested
 * against bytes and not against its own reading of them, CRC-32C included.
 */
import { crc32c } from '@node-rs/crc32';

export interface TestRecord {
  readonly offsetDelta: number;
  readonly timestampDelta?: number;
  readonly key?: Uint8Array | null;
  readonly value: Uint8Array | null;
  readonly headers?: readonly (readonly [string, Uint8Array | null])[];
}

export interface TestBatch {
  readonly firstOffset: bigint;
  readonly records: readonly TestRecord[];
  readonly attributes?: number;
  readonly lastOffsetDelta?: number;
  readonly firstTimestamp?: bigint;
  readonly maxTimestamp?: bigint;
  readonly producerId?: bigint;
  /** Compresses the records; the caller sets the codec's bits in `attributes`. */
  readonly compress?: (records: Buffer) => Buffer;
  readonly magic?: number;
  /** A CRC-32C other than the bytes': a batch damaged after it was sealed. */
  readonly crc?: number;
}

export function varint(n: number): Buffer {
  let u = n >= 0 ? n * 2 : -n * 2 - 1;
  const bytes: number[] = [];
  while (u >= 128) {
    bytes.push((u % 128) | 0x80);
    u = Math.floor(u / 128);
  }
  bytes.push(u);
  return Buffer.from(bytes);
}

function field(bytes: Uint8Array | null | undefined): Buffer {
  return bytes === null || bytes === undefined
    ? varint(-1)
    : Buffer.concat([varint(bytes.byteLength), bytes]);
}

export function recordBytes(r: TestRecord): Buffer {
  const headers = r.headers ?? [];
  const body = Buffer.concat([
    Buffer.from([0]),
    varint(r.timestampDelta ?? 0),
    varint(r.offsetDelta),
    field(r.key ?? null),
    field(r.value),
    varint(headers.length),
    ...headers.flatMap(([name, value]) => [field(Buffer.from(name)), field(value)]),
  ]);
  return Buffer.concat([varint(body.byteLength), body]);
}

export function recordBatchBytes(b: TestBatch): Buffer {
  const plain = Buffer.concat(b.records.map(recordBytes));
  const records = b.compress === undefined ? plain : b.compress(plain);
  const head = Buffer.alloc(61);
  head.writeBigInt64BE(b.firstOffset, 0);
  head.writeInt32BE(49 + records.byteLength, 8);
  head.writeInt32BE(0, 12); // partition leader epoch
  head.writeInt8(b.magic ?? 2, 16);
  head.writeUInt32BE(0, 17); // crc
  head.writeInt16BE(b.attributes ?? 0, 21);
  head.writeInt32BE(b.lastOffsetDelta ?? Math.max(0, b.records.length - 1), 23);
  head.writeBigInt64BE(b.firstTimestamp ?? 1_700_000_000_000n, 27);
  head.writeBigInt64BE(b.maxTimestamp ?? 1_700_000_000_999n, 35);
  head.writeBigInt64BE(b.producerId ?? -1n, 43);
  head.writeInt16BE(0, 51); // producer epoch
  head.writeInt32BE(0, 53); // base sequence
  head.writeInt32BE(b.records.length, 57);
  const bytes = Buffer.concat([head, records]);
  return b.crc === undefined ? sealed(bytes) : (bytes.writeUInt32BE(b.crc, 17), bytes);
}

/**
 * Writes the CRC-32C of one batch's bytes (from its attributes to its end)
 * into it, as a producer does: after a test changed a field, the batch is
 * malformed but not damaged.
 */
export function sealed(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch.subarray(21)) >>> 0, 17);
  return batch;
}
