import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compressIpcStreamLz4,
  decompressIpcStream,
  ipcStreamCodecs,
  WireCompressionError,
} from '../src/index.js';
import { MessageHeader, scanIpcStream } from '@thalweg/stream-arrow';
import { expected, fixture } from './fixtures.js';
import { batchBuffers, CHECKED_COLUMNS, fixtureColumns } from './ipc-buffers.js';

function thrown(run: () => unknown): WireCompressionError {
  try {
    run();
  } catch (error) {
    if (error instanceof WireCompressionError) return error;
    throw error;
  }
  throw new Error('expected a WireCompressionError');
}

const plain = fixture('plain.arrows');

/**
 * Where the codec byte of a batch message's BodyCompression is (Message.fbs:
 * Message slot 2 header -> RecordBatch slot 3 compression -> slot 0 codec),
 * by a minimal FlatBuffers walk: a table starts with an i32 back to its
 * vtable, a reference is a u32 forward from where it is stored.
 */
function codecPosition(metadata: Uint8Array): number {
  const v = new DataView(metadata.buffer, metadata.byteOffset, metadata.byteLength);
  const field = (table: number, slot: number) =>
    table + v.getUint16(table - v.getInt32(table, true) + 4 + 2 * slot, true);
  const child = (table: number, slot: number) => {
    const at = field(table, slot);
    return at + v.getUint32(at, true);
  };
  const root = v.getUint32(0, true);
  return field(child(child(root, 2), 3), 0);
}
const want = expected();

describe('Arrow IPC body compression: reading what pyarrow wrote', () => {
  for (const [file, codec] of [
    ['lz4.arrows', 'lz4-frame'],
    ['zstd.arrows', 'zstd'],
  ] as const) {
    it(`${file}: decompressed buffers equal pyarrow's uncompressed stream`, () => {
      const compressed = fixture(file);
      expect(ipcStreamCodecs(compressed)).toEqual([codec]);
      const out = decompressIpcStream(compressed);
      expect(ipcStreamCodecs(out)).toEqual([]);
      const ours = batchBuffers(out);
      const theirs = batchBuffers(plain);
      // One dictionary batch and two record batches, none compressed any more.
      expect(ours.map((b) => [b.dictionary, b.compressed])).toEqual(
        theirs.map((b) => [b.dictionary, false]),
      );
      ours.forEach((batch, i) => {
        expect(batch.buffers.map((b) => Buffer.from(b).toString('hex'))).toEqual(
          theirs[i]!.buffers.map((b) => Buffer.from(b).toString('hex')),
        );
      });
    });

    it(`${file}: values match the ones pyarrow ${want.pyarrow} recorded`, () => {
      const columns = fixtureColumns(decompressIpcStream(fixture(file)));
      for (const name of CHECKED_COLUMNS) {
        expect(columns[name]).toEqual(want.columns[name]);
      }
      expect(columns.i64[0]).toBe('9223372036854775807');
      expect(columns.name).toContain('');
      expect(columns.name).toContain(null);
    });
  }

  it('keeps the message metadata other than the batch table byte-identical', () => {
    const out = decompressIpcStream(fixture('lz4.arrows'));
    const before = scanIpcStream(fixture('lz4.arrows'));
    const after = scanIpcStream(out);
    expect(after.map((m) => m.headerType)).toEqual(before.map((m) => m.headerType));
    expect(Buffer.from(after[0]!.metadata).equals(Buffer.from(before[0]!.metadata))).toBe(true);
    expect(after.every((m) => m.bodyOffset % 8 === 0 && m.body.byteLength % 8 === 0)).toBe(true);
  });

  it('returns an uncompressed stream as it is', () => {
    expect(decompressIpcStream(plain)).toBe(plain);
  });
});

describe('Arrow IPC body compression: writing LZ4_FRAME', () => {
  it("round-trips pyarrow's plain stream through LZ4 and back", () => {
    const compressed = compressIpcStreamLz4(plain);
    expect(ipcStreamCodecs(compressed)).toEqual(['lz4-frame']);
    expect(compressed.byteLength).toBeLessThan(plain.byteLength);
    const back = decompressIpcStream(compressed);
    expect(
      batchBuffers(back).map((b) => b.buffers.map((x) => Buffer.from(x).toString('hex'))),
    ).toEqual(batchBuffers(plain).map((b) => b.buffers.map((x) => Buffer.from(x).toString('hex'))));
    expect(fixtureColumns(back).name).toEqual(want.columns['name']);
  });

  it('stores a buffer raw behind a -1 length when compression does not pay', () => {
    // The first record batch (not the dictionary batch, which is all tiny).
    const message = scanIpcStream(compressIpcStreamLz4(plain)).find(
      (m) => m.headerType === MessageHeader.RecordBatch,
    )!;
    const lengths = message.buffers
      .filter((b) => b.length > 0)
      .map((b) =>
        new DataView(message.body.buffer, message.body.byteOffset).getBigInt64(b.offset, true),
      );
    expect(lengths).toContain(-1n);
    expect(lengths.some((l) => l > 0n)).toBe(true);
  });

  it('refuses to compress a stream twice', () => {
    expect(thrown(() => compressIpcStreamLz4(fixture('lz4.arrows'))).code).toBe(
      'TWG_IPC_STREAM_INVALID',
    );
  });
});

describe('Arrow IPC body compression: bad input', () => {
  it('names the byte offset of garbage and truncation', () => {
    const garbage = thrown(() => decompressIpcStream(Buffer.from('this is no arrow stream')));
    expect(garbage.code).toBe('TWG_IPC_STREAM_INVALID');
    expect(garbage.offset).toBe(0);
    const lz4 = fixture('lz4.arrows');
    const cut = thrown(() => decompressIpcStream(lz4.subarray(0, lz4.byteLength - 100)));
    expect(cut.code).toBe('TWG_IPC_STREAM_INVALID');
    expect(cut.offset).toBeGreaterThan(0);
  });

  it('names a corrupt compressed buffer by its offset', () => {
    const lz4 = Buffer.from(fixture('lz4.arrows'));
    const last = scanIpcStream(lz4).at(-1)!;
    const region = last.buffers.find((b) => b.length > 40)!;
    lz4[last.bodyOffset + region.offset + 8] = 0x00; // the frame's magic
    const error = thrown(() => decompressIpcStream(lz4));
    expect(error.code).toBe('TWG_LZ4_FRAME_INVALID');
    expect(error.offset).toBe(last.bodyOffset + region.offset);
  });

  it('refuses an unknown codec and a body above the limit', () => {
    const zstd = Buffer.from(fixture('zstd.arrows'));
    // BodyCompression is the only table whose codec byte is 1 (ZSTD) right
    // before a method byte 0 at the end of the metadata: find it by a scan of
    // the metadata for a codec that, changed, the reader names.
    const message = scanIpcStream(zstd).at(-1)!;
    const metadataAt = message.offset + 8;
    const codecAt = codecPosition(message.metadata);
    zstd[metadataAt + codecAt] = 7;
    expect(thrown(() => decompressIpcStream(zstd)).code).toBe('TWG_IPC_CODEC_UNSUPPORTED');
    const limit = thrown(() =>
      decompressIpcStream(fixture('zstd.arrows'), { maxOutputBytes: 1024 }),
    );
    expect(limit.code).toBe('TWG_DECOMPRESS_LIMIT');
  });
});

describe('Arrow IPC body compression: corrupted input', () => {
  it('fails only with WireCompressionError, whatever bytes are flipped', () => {
    const sources = [fixture('lz4.arrows'), fixture('zstd.arrows')];
    fc.assert(
      fc.property(
        fc.nat(1),
        fc.array(fc.tuple(fc.nat(1 << 20), fc.integer({ min: 1, max: 255 })), {
          minLength: 1,
          maxLength: 3,
        }),
        (which, flips) => {
          const corrupted = Buffer.from(sources[which]!);
          for (const [at, mask] of flips) corrupted[at % corrupted.byteLength]! ^= mask;
          try {
            decompressIpcStream(corrupted, { maxOutputBytes: 1 << 24 });
          } catch (error) {
            expect(error).toBeInstanceOf(WireCompressionError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
