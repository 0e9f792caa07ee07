import {
  DataType,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  type Field,
  type RecordBatch,
  type Schema,
} from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ArrowBatchError,
  compressIpcBodies,
  decodeIpcStream,
  readIpcFileSegment,
  type IpcBodyCodecs,
} from '../src/index.js';
import { Random, printed, randomBatch, randomSchema } from './arrow-random.js';

/**
 * Random schemas and batches (every type apache-arrow's writer writes,
 * nested and dictionary-encoded included), written by apache-arrow as
 * streams and as files, read back by the one reader: each reads back
 * identically, or is refused as unsupported; never as corrupt.
 */
function readBack(read: () => RecordBatch[], written: readonly RecordBatch[]): void {
  let batches: RecordBatch[];
  try {
    batches = read();
  } catch (error) {
    if (error instanceof ArrowBatchError && error.code === 'TWG_ARROW_IPC_UNSUPPORTED') return;
    throw error;
  }
  expect(batches.map((b) => b.schema.fields.map((f) => `${f.name}: ${String(f.type)}`))).toEqual(
    written.map((b) => b.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)),
  );
  expect(batches.map(printed)).toEqual(written.map(printed));
}

/**
 * Body compression with every buffer stored raw behind a -1 length (the
 * "encoder" never wins), so the decompression layout is exercised without
 * a codec: one that is asked anything fails the test.
 */
const storeRaw = { codec: 'lz4-frame' as const, compress: (plain: Uint8Array) => plain };
const noCodec: IpcBodyCodecs = {
  decompress: () => {
    throw new Error('a buffer stored raw was sent to a codec');
  },
};

function hasDictionary(schema: Schema): boolean {
  const walk = (type: DataType): boolean =>
    DataType.isDictionary(type) ||
    (type.children as readonly Field<DataType>[] | undefined)?.some((f) => walk(f.type)) === true;
  return schema.fields.some((f: Field<DataType>) => walk(f.type));
}

describe('IPC round trip of random schemas and batches', () => {
  it('reads back what apache-arrow wrote, as a stream and as a file', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const r = new Random(seed);
        const schema = randomSchema(r);
        const batches = Array.from({ length: r.int(1, 3) }, () =>
          randomBatch(r, schema, r.int(0, 12)),
        );
        const one = batches[0]!;
        const stream = RecordBatchStreamWriter.writeAll([one]).toUint8Array(true);
        readBack(() => [decodeIpcStream(stream)], [one]);
        readBack(
          () => [decodeIpcStream(compressIpcBodies(stream, storeRaw), { codecs: noCodec })],
          [one],
        );
        // The file format has no replacement dictionaries: batches whose
        // dictionaries differ are written one to a file.
        const files = hasDictionary(schema) ? batches.map((b) => [b]) : [batches];
        for (const written of files) {
          const file = RecordBatchFileWriter.writeAll(written).toUint8Array(true);
          readBack(() => readIpcFileSegment(file), written);
        }
      }),
      { seed: 15, numRuns: 250 },
    );
  });
});
