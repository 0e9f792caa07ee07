import {
  DenseUnion,
  Field,
  Int32,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  SparseUnion,
  Struct,
  Utf8,
  makeBuilder,
  makeData,
  type Data,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { ArrowBatchError, decodeIpcStream, readIpcFileSegment } from '../../src/index.js';
import { fixture } from '../fixtures.js';

/**
 * Issue 15: valid Arrow, written and validated by pyarrow, that the reader
 * decoded wrongly or refused as corrupt.
 */
function refusal(run: () => unknown): ArrowBatchError {
  try {
    run();
  } catch (error) {
    if (error instanceof ArrowBatchError) return error;
    throw error;
  }
  throw new Error('expected an ArrowBatchError');
}

const types = (batch: RecordBatch) => batch.schema.fields.map((f) => String(f.type));
const columnTypes = (batch: RecordBatch) =>
  batch.schema.fields.map((_, i) => String(batch.getChildAt(i)?.type));
const values = (batch: RecordBatch, i: number): unknown[] => [...(batch.getChildAt(i) ?? [])];

const readers = {
  stream: (name: string) => [decodeIpcStream(fixture(`${name}.arrows`))],
  file: (name: string) => readIpcFileSegment(fixture(`${name}.arrow`)),
};

describe.each(Object.entries(readers))('valid Arrow through the %s reader', (_, read) => {
  it('two fields of one name keep their own types: columns by index, not by name', () => {
    const [batch] = read('duplicate-names');
    expect(batch).toBeDefined();
    expect(types(batch!)).toEqual(['Int8', 'Int32']);
    expect(columnTypes(batch!)).toEqual(['Int8', 'Int32']);
    expect(values(batch!, 0)).toEqual([1, -2, 3]);
    expect(values(batch!, 1)).toEqual([70000, -5, 6]);
  });

  it('reads a null-type column, which has no validity bitmap', () => {
    const [batch] = read('null-column');
    expect(types(batch!)).toEqual(['Null', 'Int32']);
    expect(values(batch!, 0)).toEqual([null, null, null]);
    expect(values(batch!, 1)).toEqual([1, null, 3]);
  });

  it('reads sparse and dense unions, which have no validity bitmap', () => {
    for (const name of ['sparse-union', 'dense-union']) {
      const [batch] = read(name);
      expect(values(batch!, 0)).toEqual([5, 'b', 7]);
    }
  });

  it('refuses list view and run-end encoded columns as unsupported, not corrupt', () => {
    for (const name of ['list-view', 'run-end-encoded']) {
      expect(refusal(() => read(name)).code).toBe('TWG_ARROW_IPC_UNSUPPORTED');
    }
  });
});

describe('an IPC file with no record batch', () => {
  it('holds no batch, whatever its column types', () => {
    expect(readIpcFileSegment(fixture('no-batches-int.arrow'))).toEqual([]);
    expect(readIpcFileSegment(fixture('no-batches-utf8.arrow'))).toEqual([]);
  });
});

describe('unions whose children hold nulls (apache-arrow writes a sparse union so)', () => {
  for (const Union of [SparseUnion, DenseUnion]) {
    it(`${Union.name}: reads them, the nulls where the chosen child value is null`, () => {
      const type = new Union(
        [0, 1],
        [new Field('i', new Int32(), true), new Field('s', new Utf8(), true)],
      );
      const builder = makeBuilder({
        type,
        nullValues: [null],
        valueToChildTypeId: (_: unknown, v: unknown) => (typeof v === 'string' ? 1 : 0),
      } as Parameters<typeof makeBuilder>[0]);
      for (const v of [5, 'b', null, 7]) builder.append(v);
      const column = builder.finish().flush() as Data;
      const schema = new Schema([new Field('u', type, true)]);
      const batch = new RecordBatch(
        schema,
        makeData({ type: new Struct(schema.fields), length: 4, nullCount: 0, children: [column] }),
      );
      const stream = RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true);
      expect(values(decodeIpcStream(stream), 0)).toEqual([5, 'b', null, 7]);
      const file = RecordBatchFileWriter.writeAll([batch]).toUint8Array(true);
      expect(values(readIpcFileSegment(file)[0]!, 0)).toEqual([5, 'b', null, 7]);
    });
  }
});
