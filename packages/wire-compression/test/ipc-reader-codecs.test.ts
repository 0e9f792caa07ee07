import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ArrowBatchError,
  decodeIpcStream,
  readIpcFileSegment,
  type DecodeOptions,
} from '@thalweg/stream-arrow';
import { describe, expect, it } from 'vitest';
import { ipcBodyCodecs } from '../src/index.js';

/** pyarrow's compressed IPC, from stream-arrow's fixtures (see make-fixtures.py there). */
function fixture(name: string): Uint8Array {
  const dir = join(import.meta.dirname, '..', '..', 'stream-arrow', 'test', 'fixtures');
  return new Uint8Array(readFileSync(join(dir, name)));
}

const withCodecs: DecodeOptions = { codecs: ipcBodyCodecs };
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => BigInt(from + i));
const names = (n: number, from = 0) =>
  Array.from({ length: n }, (_, k) => ((k + from) % 7 === 3 ? null : `name-${(k + from) % 13}`));

function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected an ArrowBatchError');
}

describe('the one IPC reader, reading compressed bodies through these codecs', () => {
  for (const codec of ['lz4', 'zstd']) {
    it(`reads pyarrow's ${codec} IPC file`, () => {
      const batches = readIpcFileSegment(fixture(`compressed-${codec}.arrow`), withCodecs);
      expect(batches.map((b) => b.numRows)).toEqual([200, 100]);
      expect([...batches[1]!.getChild('id')!]).toEqual(ids(100, 200));
      expect([...batches[1]!.getChild('name')!]).toEqual(names(100, 200));
    });

    it(`reads pyarrow's ${codec} IPC stream of one batch`, () => {
      const batch = decodeIpcStream(fixture(`compressed-one-${codec}.arrows`), withCodecs);
      expect([...batch.getChild('id')!]).toEqual(ids(300));
      expect([...batch.getChild('name')!]).toEqual(names(300));
    });

    it(`refuses ${codec} bodies without codecs, as compressed`, () => {
      const file = refusal(() => readIpcFileSegment(fixture(`compressed-${codec}.arrow`)));
      expect(file.code).toBe('TWG_ARROW_IPC_COMPRESSED');
      const stream = refusal(() => decodeIpcStream(fixture(`compressed-one-${codec}.arrows`)));
      expect(stream.code).toBe('TWG_ARROW_IPC_COMPRESSED');
    });
  }

  it('refuses a body that declares more than maxDecompressedBytes before decompressing', () => {
    const error = refusal(() =>
      readIpcFileSegment(fixture('compressed-zstd.arrow'), {
        codecs: ipcBodyCodecs,
        maxDecompressedBytes: 512,
      }),
    );
    expect(error.code).toBe('TWG_ARROW_IPC_TOO_LARGE');
  });
});
