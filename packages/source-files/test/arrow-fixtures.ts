import {
  Binary,
  Bool,
  DateDay,
  Field,
  Float64,
  Int32,
  Int64,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  TimestampMicrosecond,
  Uint64,
  Utf8,
  makeData,
  vectorFromArray,
  type Data,
  type DataType,
  type Vector,
} from 'apache-arrow';

/** One row of the fixture, as the JavaScript values it was built from. */
export interface Row {
  readonly id: bigint;
  readonly name: string | null;
  readonly score: number;
  readonly flag: boolean | null;
  readonly at: bigint | null;
  readonly day: number;
  readonly raw: Uint8Array | null;
  readonly small: number;
  readonly big: bigint;
}

export const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('name', new Utf8(), true),
  new Field('score', new Float64(), false),
  new Field('flag', new Bool(), true),
  new Field('at', new TimestampMicrosecond('UTC'), true),
  new Field('day', new DateDay(), false),
  new Field('raw', new Binary(), true),
  new Field('small', new Int32(), false),
  new Field('big', new Uint64(), false),
]);

export function makeRows(start: number, n: number): Row[] {
  return Array.from({ length: n }, (_, k) => {
    const i = start + k;
    return {
      id: BigInt(i) * 1_000_000_007n - 2n ** 62n,
      name: i % 3 === 0 ? null : `név "${i}"\n`,
      score: i % 4 === 0 ? -0 : i / 7,
      flag: i % 5 === 0 ? null : i % 2 === 0,
      at: i % 6 === 0 ? null : 1_700_000_000_123_456n + BigInt(i),
      day: 19_000 + i,
      raw: i % 7 === 0 ? null : Uint8Array.of(i & 255, 0, 255),
      small: -i,
      big: 2n ** 64n - 1n - BigInt(i),
    };
  });
}

function column(type: DataType, values: unknown[]): Data {
  return vectorFromArray(values as never, type as never).data[0]!;
}

/** A batch of one nullable column. */
export function oneColumn(name: string, vector: Vector): RecordBatch {
  const s = new Schema([new Field(name, vector.type as DataType, true)]);
  const data = vector.data[0]!;
  return new RecordBatch(
    s,
    makeData({ type: new Struct(s.fields), length: data.length, children: [data as Data] }),
  );
}

export function makeBatch(rows: readonly Row[]): RecordBatch {
  const n = rows.length;
  const validity = (pick: (r: Row) => unknown) => {
    const bits = new Uint8Array(Math.ceil(n / 8) || 1);
    rows.forEach((r, i) => {
      if (pick(r) !== null) bits[i >> 3]! |= 1 << (i & 7);
    });
    return bits;
  };
  const at = makeData({
    type: new TimestampMicrosecond('UTC'),
    length: n,
    nullCount: rows.filter((r) => r.at === null).length,
    nullBitmap: validity((r) => r.at),
    data: BigInt64Array.from(rows.map((r) => r.at ?? 0n)),
  });
  const day = makeData({
    type: new DateDay(),
    length: n,
    data: Int32Array.from(rows.map((r) => r.day)),
  });
  const children = [
    column(
      new Int64(),
      rows.map((r) => r.id),
    ),
    column(
      new Utf8(),
      rows.map((r) => r.name),
    ),
    column(
      new Float64(),
      rows.map((r) => r.score),
    ),
    column(
      new Bool(),
      rows.map((r) => r.flag),
    ),
    at,
    day,
    column(
      new Binary(),
      rows.map((r) => r.raw),
    ),
    column(
      new Int32(),
      rows.map((r) => r.small),
    ),
    column(
      new Uint64(),
      rows.map((r) => r.big),
    ),
  ];
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: n, children }),
  );
}

export function ipcStream(batches: readonly RecordBatch[]): Uint8Array {
  return RecordBatchStreamWriter.writeAll(batches).toUint8Array(true);
}

export function ipcFile(batches: readonly RecordBatch[]): Uint8Array {
  return RecordBatchFileWriter.writeAll(batches).toUint8Array(true);
}

/** The JSON text a row renders to, written out independently of row-json.ts. */
export function expectedJson(r: Row): string {
  const date = new Date(r.day * 86_400_000).toISOString().slice(0, 10);
  const at =
    r.at === null
      ? 'null'
      : `"${new Date(Number(r.at / 1000n)).toISOString().slice(0, 19)}.${String(r.at % 1_000_000n).padStart(6, '0')}Z"`;
  const parts = [
    `"id":"${r.id}"`,
    `"name":${r.name === null ? 'null' : JSON.stringify(r.name)}`,
    `"score":${Object.is(r.score, -0) ? '-0' : JSON.stringify(r.score)}`,
    `"flag":${r.flag === null ? 'null' : String(r.flag)}`,
    `"at":${at}`,
    `"day":"${date}"`,
    `"raw":${r.raw === null ? 'null' : `"${Buffer.from(r.raw).toString('base64')}"`}`,
    `"small":${r.small}`,
    `"big":"${r.big}"`,
  ];
  return `{${parts.join(',')}}`;
}
