import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  Dictionary,
  Field,
  Int32,
  List,
  RecordBatch,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
  makeData,
  vectorFromArray,
} from 'apache-arrow';
import fc from 'fast-check';
import { headerValue } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { FILE_HEADER, FileSourceError, type FileSetSourceOptions } from '../src/index.js';
import {
  expectedJson,
  ipcFile,
  ipcStream,
  makeBatch,
  makeRows,
  oneColumn,
  type Row,
} from './arrow-fixtures.js';
import {
  checkSpans,
  collect,
  offsets,
  openSource,
  rejection,
  refusal,
  stored,
  tempDir,
  values,
} from './helpers.js';

function arrowOptions(
  dir: string,
  more: { maxBatchRecords?: number; timestampColumn?: string } = {},
): FileSetSourceOptions {
  return {
    files: { kind: 'directory', directory: dir, extension: '.arrow' },
    format: 'arrow-ipc',
    ...more,
  };
}

/** Two files: a stream of batches of 3, 0, 4 and 2 rows, then a file of 1 and 5. */
async function twoFiles(
  dir: string,
): Promise<{ rows: Row[]; stream: Uint8Array; file: Uint8Array }> {
  const rows = makeRows(0, 15);
  const stream = ipcStream([
    makeBatch(rows.slice(0, 3)),
    makeBatch([]),
    makeBatch(rows.slice(3, 7)),
    makeBatch(rows.slice(7, 9)),
  ]);
  const file = ipcFile([makeBatch(rows.slice(9, 10)), makeBatch(rows.slice(10, 15))]);
  await writeFile(join(dir, 'a-stream.arrow'), stream);
  await writeFile(join(dir, 'b-file.arrow'), file);
  return { rows, stream, file };
}

describe('FileSetSource over Arrow IPC', () => {
  it('yields every row of stream and file formats as JSON, with contiguous offsets', async () => {
    const dir = await tempDir();
    const { rows } = await twoFiles(dir);
    await writeFile(join(dir, 'c-empty.arrow'), new Uint8Array(0));
    const source = await openSource(arrowOptions(dir, { maxBatchRecords: 4 }));
    const batches = await collect(source);
    checkSpans(batches);
    expect(values(batches)).toEqual(rows.map(expectedJson));
    expect(offsets(batches)).toEqual(rows.map((_, i) => i));
    const files = batches.flatMap((b) =>
      b.records.map((r) => Buffer.from(headerValue(r.headers, FILE_HEADER)!).toString()),
    );
    expect(files).toEqual([
      ...Array<string>(9).fill('a-stream.arrow'),
      ...Array<string>(6).fill('b-file.arrow'),
    ]);
    for (const v of values(batches)) expect(() => JSON.parse(v) as unknown).not.toThrow();
    expect(source.stats()).toMatchObject({ filesDone: 3, records: 15 });
  });

  it('reads a file-format file that also holds a schema message, as other writers make them', async () => {
    const dir = await tempDir();
    const rows = makeRows(0, 5);
    const batches = [makeBatch(rows.slice(0, 2)), makeBatch(rows.slice(2))];
    const stream = ipcStream(batches);
    const file = ipcFile(batches);
    // apache-arrow's file writer keeps the schema in the footer only; put the
    // stream's schema message in front of the batches, as pyarrow and C++ do.
    const schemaLength = 8 + new DataView(stream.buffer, stream.byteOffset).getInt32(4, true);
    const both = Buffer.concat([
      file.subarray(0, 8),
      stream.subarray(0, schemaLength),
      file.subarray(8),
    ]);
    await writeFile(join(dir, 'x.arrow'), both);
    const source = await openSource(arrowOptions(dir, { maxBatchRecords: 3 }));
    const all = await collect(source);
    expect(values(all)).toEqual(rows.map(expectedJson));
    const cursor = stored(source.cursorAt(source.partitions()[0]!, 3));
    const plainDir = await tempDir();
    await writeFile(join(plainDir, 'x.arrow'), file);
    const plain = await openSource(arrowOptions(plainDir, { maxBatchRecords: 3 }));
    await collect(plain);
    const plainCursor = plain.cursorAt(plain.partitions()[0]!, 3);
    if (plainCursor.kind !== 'file-set') throw new Error('file-set expected');
    expect(cursor).toMatchObject({ position: plainCursor.position + schemaLength });
    const again = await openSource(arrowOptions(dir));
    again.seek(again.partitions()[0]!, cursor);
    expect(values(await collect(again))).toEqual(rows.slice(3).map(expectedJson));
  });

  it('resumes at every batch boundary, inside and between IPC batches', async () => {
    const dir = await tempDir();
    const { rows } = await twoFiles(dir);
    const full = rows.map(expectedJson);
    for (const size of [1, 2, 3]) {
      const probe = await openSource(arrowOptions(dir, { maxBatchRecords: size }));
      const count = (await collect(probe)).length;
      for (let cut = 0; cut <= count; cut++) {
        const first = await openSource(arrowOptions(dir, { maxBatchRecords: size }));
        const head = await collect(first, cut);
        const next = head.at(-1)?.span.end ?? 0;
        const cursor = stored(first.cursorAt(first.partitions()[0]!, next));
        const second = await openSource(arrowOptions(dir, { maxBatchRecords: 4 }));
        second.seek(second.partitions()[0]!, cursor);
        const rest = await collect(second);
        checkSpans(rest, next);
        expect([...values(head), ...values(rest)]).toEqual(full);
      }
    }
  });

  it('a cursor inside a batch names the batch message; nextOffset tells the rows to skip', async () => {
    const dir = await tempDir();
    await twoFiles(dir);
    const source = await openSource(arrowOptions(dir, { maxBatchRecords: 5 }));
    await collect(source, 1);
    const inside = source.cursorAt(source.partitions()[0]!, 5);
    const again = await openSource(arrowOptions(dir));
    const p = again.partitions()[0]!;
    if (inside.kind !== 'file-set') throw new Error('file-set expected');
    expect(inside.file).toBe('a-stream.arrow');
    expect(refusal(() => again.seek(p, { ...inside, nextOffset: 7 }))).toMatchObject({
      code: 'TWG_FILE_CURSOR_INVALID',
      field: 'cursor.nextOffset',
    });
    expect(refusal(() => again.seek(p, { ...inside, nextOffset: 2 }))).toMatchObject({
      field: 'cursor.nextOffset',
    });
    expect(
      refusal(() => again.seek(p, { ...inside, position: inside.position + 8 })),
    ).toMatchObject({
      field: 'cursor.position',
    });
    again.seek(p, inside);
    expect(offsets(await collect(again))[0]).toBe(5);
  });

  it('takes the record timestamp from timestampColumn, the file time where it is null', async () => {
    const dir = await tempDir();
    const type = new TimestampMillisecond('UTC');
    const s = new Schema([new Field('ts', type, true), new Field('n', new Int32(), false)]);
    const ts = makeData({
      type,
      length: 2,
      nullCount: 1,
      nullBitmap: Uint8Array.of(1),
      data: BigInt64Array.of(1_600_000_000_123n, 0n),
    });
    const n = vectorFromArray([1, 2], new Int32()).data[0]!;
    const batch = new RecordBatch(
      s,
      makeData({ type: new Struct(s.fields), length: 2, children: [ts, n] }),
    );
    await writeFile(join(dir, 'x.arrow'), ipcStream([batch]));
    const source = await openSource(arrowOptions(dir, { timestampColumn: 'ts' }));
    const records = (await collect(source)).flatMap((b) => b.records);
    expect(records[0]!.timestamp).toBe(1_600_000_000_123);
    expect(records[1]!.timestamp).toBeGreaterThan(1_600_000_000_123);
    expect(values([{ span: { topic: 't', partition: 0, start: 0, end: 2 }, records }])).toEqual([
      '{"ts":"2020-09-13T12:26:40.123Z","n":1}',
      '{"ts":null,"n":2}',
    ]);
    const wrong = await openSource(arrowOptions(dir, { timestampColumn: 'n' }));
    expect(await rejection(() => collect(wrong))).toMatchObject({
      code: 'TWG_FILE_IPC_UNSUPPORTED',
      field: 'column "n"',
    });
  });

  it('refuses column types it does not render, naming the column', async () => {
    const dir = await tempDir();
    const list = vectorFromArray([[1, 2], [3]], new List(new Field('item', new Int32(), true)));
    await writeFile(join(dir, 'x.arrow'), ipcStream([oneColumn('xs', list)]));
    const error = await rejection(() => openSource(arrowOptions(dir)).then((s) => collect(s)));
    expect(error).toMatchObject({
      code: 'TWG_FILE_IPC_UNSUPPORTED',
      file: 'x.arrow',
      field: 'column "xs"',
    });
  });

  it('refuses dictionary-encoded columns', async () => {
    const dir = await tempDir();
    const dict = vectorFromArray(['a', 'b', 'a'], new Dictionary(new Utf8(), new Int32()));
    const bytes = ipcStream([oneColumn('d', dict)]);
    await writeFile(join(dir, 'x.arrow'), bytes);
    const error = await rejection(() => openSource(arrowOptions(dir)).then((s) => collect(s)));
    expect(error).toMatchObject({
      code: 'TWG_FILE_IPC_UNSUPPORTED',
      file: 'x.arrow',
      field: 'column "d"',
    });
  });

  describe('corrupt files fail with the file and the byte position', () => {
    async function readBytes(bytes: Uint8Array) {
      const dir = await tempDir();
      await writeFile(join(dir, 'bad.arrow'), bytes);
      const source = await openSource(arrowOptions(dir, { maxBatchRecords: 2 }));
      const got: string[] = [];
      try {
        for await (const b of source.batches(new AbortController().signal))
          got.push(...values([b]));
        return { got, error: undefined };
      } catch (error) {
        return { got, error };
      }
    }

    it('a metadata length that does not fit, at the second batch', async () => {
      const rows = makeRows(0, 4);
      const first = ipcStream([makeBatch(rows.slice(0, 2))]);
      const bytes = Buffer.from(ipcStream([makeBatch(rows.slice(0, 2)), makeBatch(rows.slice(2))]));
      const second = first.byteLength - 8; // the end marker of the one-batch stream is where batch 2 starts
      bytes.writeInt32LE(0x7fffff00, second + 4);
      const { got, error } = await readBytes(bytes);
      expect(got).toEqual(rows.slice(0, 2).map(expectedJson));
      expect(error).toBeInstanceOf(FileSourceError);
      expect(error).toMatchObject({
        code: 'TWG_FILE_IPC_INVALID',
        file: 'bad.arrow',
        position: second,
      });
    });

    it('a truncated stream and a file without its trailing magic', async () => {
      const batches = [makeBatch(makeRows(0, 3))];
      const stream = ipcStream(batches);
      const cut = await readBytes(stream.subarray(0, stream.byteLength - 20));
      expect(cut.got).toEqual([]);
      expect(cut.error).toMatchObject({ code: 'TWG_FILE_IPC_INVALID', file: 'bad.arrow' });
      expect((cut.error as FileSourceError).position).toBeGreaterThan(0);
      const file = ipcFile(batches);
      const torn = await readBytes(file.subarray(0, file.byteLength - 3));
      expect(torn.error).toMatchObject({
        code: 'TWG_FILE_IPC_INVALID',
        position: file.byteLength - 9,
      });
      const garbage = await readBytes(Buffer.from('this is not arrow at all'));
      expect(garbage.error).toMatchObject({ code: 'TWG_FILE_IPC_INVALID', position: 0 });
    });

    it('any corruption either reads or fails naming file and position: never another error', async () => {
      const rows = makeRows(0, 6);
      const bytes = ipcStream([makeBatch(rows.slice(0, 3)), makeBatch(rows.slice(3))]);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.nat(bytes.byteLength - 1), fc.integer({ min: 1, max: 255 })), {
            minLength: 1,
            maxLength: 4,
          }),
          async (flips) => {
            const corrupted = Buffer.from(bytes);
            for (const [at, mask] of flips) corrupted[at]! ^= mask;
            const { got, error } = await readBytes(corrupted);
            if (error === undefined) {
              expect(got.length).toBeLessThanOrEqual(6);
              for (const v of got) expect(() => JSON.parse(v) as unknown).not.toThrow();
            } else {
              expect(error).toBeInstanceOf(FileSourceError);
              const e = error as FileSourceError;
              expect(e.file).toBe('bad.arrow');
              if (e.code === 'TWG_FILE_IPC_INVALID') expect(e.position).toBeTypeOf('number');
            }
          },
        ),
        { numRuns: 150 },
      );
    });
  });
});
