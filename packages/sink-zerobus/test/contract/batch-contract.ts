import { describe, expect, it } from 'vitest';
import {
  Dictionary,
  Field,
  Int32,
  Int64,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  TimeUnit,
  Timestamp,
  tableToIPC,
  Utf8,
  vectorFromArray,
  type Data,
  type DataType,
} from 'apache-arrow';
import { ZerobusSinkError } from '../../src/errors.js';
import type { StreamField, StreamSpec, TransportFactory } from '../../src/transport.js';

/** A batch of `rows` rows under `schema`, one column per field, built by `column`. */
function batch(schema: Schema, rows: number, column = (type: DataType) => valuesOf(type, rows)) {
  return new RecordBatch(
    schema,
    makeData({
      type: new Struct(schema.fields),
      length: rows,
      children: schema.fields.map((f: Field) => column(f.type as DataType)),
    }),
  );
}

function valuesOf(type: DataType, rows: number): Data {
  if (type instanceof Int64)
    return makeData({
      type,
      length: rows,
      data: BigInt64Array.from({ length: rows }, (_, i) => BigInt(i)),
    });
  if (type instanceof Timestamp)
    return makeData({ type, length: rows, data: new BigInt64Array(rows) });
  if (type instanceof Int32)
    return makeData({ type, length: rows, data: Int32Array.from({ length: rows }, (_, i) => i) });
  if (type instanceof Utf8) {
    const strings = Array.from({ length: rows }, (_, i) => `v${i}`);
    return vectorFromArray(strings, type).data[0]!;
  }
  throw new Error(`no test values for ${String(type as unknown)}`);
}

const ipc = (...batches: RecordBatch[]): Uint8Array => tableToIPC(new Table(batches), 'stream');
const schema = (...fields: Field[]) => new Schema(fields);
const int32 = (name: string, nullable = false) => new Field(name, new Int32(), nullable);
const spec = (...fields: StreamField[]): StreamSpec => ({ table: 'main.thalweg.contract', fields });
const N: StreamSpec = spec({ name: 'n', type: 'int32', nullable: false });
const AB: StreamSpec = spec(
  { name: 'a', type: 'int32', nullable: false },
  { name: 'b', type: 'int32', nullable: false },
);

interface Refusal {
  readonly what: string;
  readonly spec: StreamSpec;
  readonly payload: () => Uint8Array;
  /** A valid batch for `spec`, sent after the refusal. */
  readonly valid: () => Uint8Array;
  /** What the refusal must say, on both sides (the fake's and the binding's wording differ). */
  readonly says: RegExp;
}

const validN = () => ipc(batch(schema(int32('n')), 2));
const validAB = () => ipc(batch(schema(int32('a'), int32('b')), 2));

/**
 * Every refusal the binding makes before a batch goes on the wire (observed
 * on @databricks/zerobus-ingest-sdk 1.3.0 against the local peer, which
 * never sees these batches: the binding refuses them itself). Each is
 * checked on the real side too, so none is exempt.
 */
export const REFUSALS: readonly Refusal[] = [
  {
    what: 'other names and types than the declared fields (int64 id vs utf8 totally_different)',
    spec: spec({ name: 'totally_different', type: 'utf8', nullable: false }),
    payload: () => ipc(batch(schema(new Field('id', new Int64(), false)), 2)),
    valid: () => ipc(batch(schema(new Field('totally_different', new Utf8(), false)), 2)),
    says: /"id".*"totally_different"|"totally_different".*"id"/s,
  },
  {
    what: 'a field named differently',
    spec: N,
    payload: () => ipc(batch(schema(int32('m')), 2)),
    valid: validN,
    says: /"m"/,
  },
  {
    what: 'a field of another type',
    spec: N,
    payload: () => ipc(batch(schema(new Field('n', new Int64(), false)), 2)),
    valid: validN,
    says: /Int64/,
  },
  {
    what: 'a timestamp without the UTC zone',
    spec: spec({ name: 't', type: 'timestamp-micros', nullable: false }),
    payload: () =>
      ipc(batch(schema(new Field('t', new Timestamp(TimeUnit.MICROSECOND), false)), 2)),
    valid: () =>
      ipc(batch(schema(new Field('t', new Timestamp(TimeUnit.MICROSECOND, 'UTC'), false)), 2)),
    says: /"t"/,
  },
  {
    what: 'a dictionary-encoded string column',
    spec: spec({ name: 's', type: 'utf8', nullable: false }),
    payload: () => {
      const words = vectorFromArray(['a', 'b'], new Dictionary(new Utf8(), new Int32()));
      return ipc(batch(schema(new Field('s', words.type, false)), 2, () => words.data[0]!));
    },
    valid: () => ipc(batch(schema(new Field('s', new Utf8(), false)), 2)),
    says: /Dictionary/,
  },
  {
    what: 'a nullable field declared NOT NULL',
    spec: N,
    payload: () => ipc(batch(schema(int32('n', true)), 2)),
    valid: validN,
    says: /nullable/i,
  },
  {
    what: 'a NOT NULL field declared nullable',
    spec: spec({ name: 'n', type: 'int32', nullable: true }),
    payload: validN,
    valid: () => ipc(batch(schema(int32('n', true)), 2)),
    says: /nullable/i,
  },
  {
    what: 'field metadata',
    spec: N,
    payload: () =>
      ipc(batch(schema(new Field('n', new Int32(), false, new Map([['origin', 'x']]))), 2)),
    valid: validN,
    says: /metadata/,
  },
  {
    what: 'schema metadata',
    spec: N,
    payload: () => ipc(batch(new Schema([int32('n')], new Map([['origin', 'x']])), 2)),
    valid: validN,
    says: /metadata/,
  },
  {
    what: 'the declared fields in another order',
    spec: AB,
    payload: () => ipc(batch(schema(int32('b'), int32('a')), 2)),
    valid: validAB,
    says: /"b"/,
  },
  {
    what: 'a field the stream does not declare',
    spec: N,
    payload: () => ipc(batch(schema(int32('n'), int32('extra')), 2)),
    valid: validN,
    says: /"extra"/,
  },
  {
    what: 'a declared field missing',
    spec: AB,
    payload: () => ipc(batch(schema(int32('a')), 2)),
    valid: validAB,
    says: /"b"/,
  },
  {
    what: 'nulls in a NOT NULL column',
    spec: N,
    payload: () =>
      ipc(
        batch(schema(int32('n')), 2, () =>
          makeData({
            type: new Int32(),
            length: 2,
            nullCount: 1,
            nullBitmap: Uint8Array.of(0b01),
            data: Int32Array.of(1, 2),
          }),
        ),
      ),
    valid: validN,
    says: /non-nullable/,
  },
  {
    what: 'two record batches in one IPC message',
    spec: N,
    payload: () => ipc(batch(schema(int32('n')), 2), batch(schema(int32('n')), 3)),
    valid: validN,
    says: /exactly one/i,
  },
  {
    what: 'a second, empty record batch in one IPC message',
    spec: N,
    payload: () => ipc(batch(schema(int32('n')), 2), batch(schema(int32('n')), 0)),
    valid: validN,
    says: /exactly one/i,
  },
  {
    what: 'an empty record batch',
    spec: N,
    payload: () => ipc(batch(schema(int32('n')), 0)),
    valid: validN,
    says: /zero rows/,
  },
  {
    what: 'a schema and no record batch',
    spec: N,
    payload: () => {
      const writer = new RecordBatchStreamWriter();
      writer.reset(undefined, schema(int32('n')));
      writer.close();
      return writer.toUint8Array(true);
    },
    valid: validN,
    says: /no record ?batch/i,
  },
  {
    what: 'bytes that are not Arrow IPC',
    spec: N,
    payload: () => Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8),
    valid: validN,
    says: /Arrow IPC/i,
  },
  {
    what: 'the IPC file format instead of the stream format',
    spec: N,
    payload: () => tableToIPC(new Table([batch(schema(int32('n')), 2)]), 'file'),
    valid: validN,
    says: /Arrow IPC/i,
  },
];

/**
 * What a stream refuses of one submit, run against the fake and against the
 * real binding over the local peer: each refusal is a `poison-batch`
 * ZerobusSinkError of scope `batch` saying what is wrong, it uses no offset
 * and leaves the stream healthy (the next valid batch gets offset 0 and is
 * acknowledged).
 */
export function describeBatchContract(
  name: string,
  factory: () => TransportFactory | Promise<TransportFactory>,
): void {
  describe(`ZerobusTransport batch contract: ${name}`, () => {
    it.each(REFUSALS)('refuses $what as poison-batch; the stream goes on', async (refusal) => {
      const t = await (await factory()).open(refusal.spec);
      const error: unknown = await t.submit(refusal.payload()).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ZerobusSinkError);
      expect(error).toMatchObject({
        failure: 'poison-batch',
        code: 'TWG_ZEROBUS_POISON_BATCH',
        scope: 'batch',
      });
      expect((error as Error).message).toMatch(refusal.says);
      expect(await t.submit(refusal.valid())).toBe(0);
      await t.flush();
      await t.close();
    });
  });
}
