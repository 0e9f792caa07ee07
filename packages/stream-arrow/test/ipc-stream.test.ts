import {
  compressionRegistry,
  CompressionType,
  Field,
  Int64,
  makeData,
  MessageHeader,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  tableFromArrays,
  tableToIPC,
  type Codec,
} from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  BatchBuilder,
  BatchSchema,
  column,
  decodeIpcStream,
  encodeIpcStream,
  scanIpcStream,
} from '../src/index.js';
import { byteFlips, flipped } from './byte-flips.js';
import { readColumn } from './read-column.js';

const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'name', type: column.utf8, nullable: true },
  ],
});
const builder = new BatchBuilder(schema);
const batch = builder.fromRows([
  { id: 1n, name: 'one' },
  { id: 2n, name: null },
]);
const bytes = encodeIpcStream(batch);

function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected an ArrowBatchError');
}

/** The schema message alone, then the end-of-stream marker. */
function schemaOnly(stream: Uint8Array): Uint8Array {
  const length = new DataView(stream.buffer, stream.byteOffset).getInt32(4, true);
  return Buffer.concat([
    stream.subarray(0, 8 + length),
    Buffer.from([255, 255, 255, 255, 0, 0, 0, 0]),
  ]);
}

describe('IPC stream, one batch per message', () => {
  it('encodes a schema, exactly one batch and the end marker; decodes it back', () => {
    const back = decodeIpcStream(bytes, { expect: schema });
    expect(readColumn(back, 'id')).toEqual([1n, 2n]);
    expect(readColumn(back, 'name')).toEqual(['one', null]);
    expect([...bytes.subarray(-8)]).toEqual([255, 255, 255, 255, 0, 0, 0, 0]);
  });

  it('decodes from a view at any byte offset (pooled network buffers are unaligned)', () => {
    const padded = new Uint8Array(bytes.byteLength + 3);
    padded.set(bytes, 3);
    expect(readColumn(decodeIpcStream(padded.subarray(3)), 'id')).toEqual([1n, 2n]);
  });

  it('refuses to encode an empty batch', () => {
    expect(refusal(() => encodeIpcStream(builder.fromRows([]))).code).toBe('TWG_ARROW_BATCH_EMPTY');
  });

  it('refuses a stream with two batches, naming the offset of the second', () => {
    const two = RecordBatchStreamWriter.writeAll([batch, batch]).toUint8Array(true);
    const error = refusal(() => decodeIpcStream(two));
    expect(error.code).toBe('TWG_ARROW_IPC_BATCH_COUNT');
    expect(error.message).toMatch(/2 record batches/);
    expect(error.offset).toBe(bytes.byteLength - 8);
  });

  it('refuses a stream with no batch', () => {
    const error = refusal(() => decodeIpcStream(schemaOnly(bytes)));
    expect(error.code).toBe('TWG_ARROW_IPC_BATCH_COUNT');
    expect(error.message).toMatch(/0 record batches/);
  });

  it('refuses garbage, truncation and trailing bytes with the byte offset', () => {
    const garbage = refusal(() => decodeIpcStream(Buffer.from('{"not":"arrow"}')));
    expect([garbage.code, garbage.offset]).toEqual(['TWG_ARROW_IPC_INVALID', 0]);
    const cut = refusal(() => decodeIpcStream(bytes.subarray(0, bytes.byteLength - 20)));
    expect(cut.code).toBe('TWG_ARROW_IPC_INVALID');
    expect(cut.offset).toBeGreaterThan(0);
    const trailing = refusal(() => decodeIpcStream(Buffer.concat([bytes, Buffer.from([1, 2, 3])])));
    expect(trailing.offset).toBe(bytes.byteLength);
    expect(refusal(() => decodeIpcStream(new Uint8Array(0))).code).toBe('TWG_ARROW_IPC_INVALID');
  });

  it('refuses a second schema message, which would change how the batch is read', () => {
    const floats = BatchSchema.define({
      fields: [{ name: 'id', type: column.float64, nullable: false }],
    });
    const ints = BatchSchema.define({
      fields: [{ name: 'id', type: column.int64, nullable: false }],
    });
    const written = encodeIpcStream(new BatchBuilder(floats).fromRows([{ id: 1.5 }, { id: 2.5 }]));
    const intSchema = encodeIpcStream(new BatchBuilder(ints).fromRows([{ id: 1n }]));
    const schemaEnd = (s: Uint8Array) => 8 + new DataView(s.buffer, s.byteOffset).getInt32(4, true);
    // The float writer's stream with an int64 schema message spliced in before its batch:
    // apache-arrow would read the float64 bits as int64 values, and `expect` would pass.
    const spliced = Buffer.concat([
      written.subarray(0, schemaEnd(written)),
      intSchema.subarray(0, schemaEnd(intSchema)),
      written.subarray(schemaEnd(written)),
    ]);
    const error = refusal(() => decodeIpcStream(spliced, { expect: ints }));
    expect([error.code, error.offset]).toEqual(['TWG_ARROW_IPC_INVALID', schemaEnd(written)]);
    expect(error.message).toMatch(/a second schema message/);
  });

  it('refuses utf8 offsets that split a character between two values', () => {
    // "é" is C3 A9: valid as a whole, but values [C3] and [A9] would each read as U+FFFD.
    const fields = [new Field('s', new Utf8(), false)];
    const split = makeData({
      type: new Utf8(),
      length: 2,
      nullCount: 0,
      valueOffsets: new Int32Array([0, 1, 2]),
      data: new Uint8Array([0xc3, 0xa9]),
    });
    const struct = makeData({
      type: new Struct(fields),
      length: 2,
      nullCount: 0,
      children: [split],
    });
    const stream = RecordBatchStreamWriter.writeAll([new RecordBatch(new Schema(fields), struct)]);
    const error = refusal(() => decodeIpcStream(stream.toUint8Array(true)));
    expect([error.code, error.field]).toEqual(['TWG_ARROW_IPC_INVALID', 's']);
    expect(error.message).toMatch(/value 1 starts inside a UTF-8 character/);
  });

  it('refuses nulls in a column the schema declares non-nullable', () => {
    const fields = [new Field('id', new Int64(), false)];
    const ids = makeData({
      type: new Int64(),
      length: 2,
      nullCount: 1,
      nullBitmap: new Uint8Array([0b01]),
      data: new BigInt64Array([7n, 8n]),
    });
    const struct = makeData({ type: new Struct(fields), length: 2, nullCount: 0, children: [ids] });
    const stream = RecordBatchStreamWriter.writeAll([new RecordBatch(new Schema(fields), struct)]);
    const nonNull = BatchSchema.define({
      fields: [{ name: 'id', type: column.int64, nullable: false }],
    });
    const error = refusal(() => decodeIpcStream(stream.toUint8Array(true), { expect: nonNull }));
    expect([error.code, error.field]).toEqual(['TWG_ARROW_IPC_INVALID', 'id']);
    expect(error.message).toMatch(/1 nulls in a non-nullable column/);
  });

  it('never fails with anything but an ArrowBatchError on corrupted bytes', () => {
    fc.assert(
      fc.property(byteFlips(bytes.byteLength, 4), (flips) => {
        const corrupted = flipped(bytes, flips);
        try {
          decodeIpcStream(corrupted);
        } catch (error) {
          expect(error).toBeInstanceOf(ArrowBatchError);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('refuses a schema other than the expected one, naming the field', () => {
    const other = BatchSchema.define({
      fields: [
        { name: 'id', type: column.int64, nullable: true },
        { name: 'name', type: column.utf8, nullable: true },
      ],
    });
    const error = refusal(() => decodeIpcStream(bytes, { expect: other }));
    expect([error.code, error.field]).toEqual(['TWG_ARROW_SCHEMA_MISMATCH', 'id']);
  });

  it('refuses compressed bodies, pointing at wire-compression', () => {
    // apache-arrow writes BodyCompression when a codec is registered. This
    // stand-in passes its LZ4 header check and never shrinks a buffer, so
    // every buffer is stored raw behind a -1 length: still a compressed body.
    compressionRegistry.set(CompressionType.LZ4_FRAME, {
      encode: (data) => Uint8Array.of(0x04, 0x22, 0x4d, 0x18, 0x40, 0x40, 0, ...data),
    });
    try {
      const compressed = new RecordBatchStreamWriter({ compressionType: CompressionType.LZ4_FRAME })
        .writeAll([batch])
        .toUint8Array(true);
      const error = refusal(() => decodeIpcStream(compressed));
      expect(error.code).toBe('TWG_ARROW_IPC_COMPRESSED');
      expect(error.message).toMatch(/@thalweg\/wire-compression/);
      // The batch message follows the schema message (marker, length, metadata).
      expect(error.offset).toBe(8 + new DataView(bytes.buffer, bytes.byteOffset).getInt32(4, true));
    } finally {
      compressionRegistry.set(CompressionType.LZ4_FRAME, null as unknown as Codec);
    }
  });

  it('reads a dictionary-encoded column, and refuses an index outside its dictionary', () => {
    const bytes = tableToIPC(tableFromArrays({ tag: ['a', 'b', 'a'] }), 'stream');
    expect([...decodeIpcStream(bytes).getChildAt(0)!]).toEqual(['a', 'b', 'a']);
    const batch = scanIpcStream(bytes).find((m) => m.headerType === MessageHeader.RecordBatch)!;
    const indices = batch.buffers[1]!;
    const corrupted = Buffer.from(bytes);
    corrupted.writeInt32LE(7, batch.bodyOffset + indices.offset);
    const error = refusal(() => decodeIpcStream(corrupted));
    expect(error.code).toBe('TWG_ARROW_IPC_INVALID');
    expect(error.message).toMatch(/dictionary index 7, the dictionary holds 2/);
  });
});
