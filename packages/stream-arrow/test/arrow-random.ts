/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-base-to-string --
 * apache-arrow types a schema's fields and a type's children with `any` type
 * parameters (and DataType's toString is its own, not Object's): this random
 * generator walks them generically. */
import {
  Binary,
  Bool,
  DateDay,
  DateMillisecond,
  DenseUnion,
  Dictionary,
  Field,
  FixedSizeBinary,
  FixedSizeList,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  LargeBinary,
  LargeUtf8,
  List,
  Map_,
  Null,
  RecordBatch,
  Schema,
  SparseUnion,
  Struct,
  TimeMillisecond,
  TimestampMicrosecond,
  TimestampNanosecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  Type,
  makeBuilder,
  makeData,
  type Data,
  type DataType,
} from 'apache-arrow';

/**
 * Random schemas and batches of every column type apache-arrow's writer
 * writes (nested, dictionary-encoded and unions included), from a seeded
 * PRNG: the same seed, the same batches.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 1;
  }

  /** xorshift32, in [0, 1). */
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 2 ** 32;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
}

const LEAVES: readonly (() => DataType)[] = [
  () => new Null(),
  () => new Bool(),
  () => new Int8(),
  () => new Int16(),
  () => new Int32(),
  () => new Int64(),
  () => new Uint8(),
  () => new Uint16(),
  () => new Uint32(),
  () => new Uint64(),
  () => new Float32(),
  () => new Float64(),
  () => new Utf8(),
  () => new LargeUtf8(),
  () => new Binary(),
  () => new LargeBinary(),
  () => new FixedSizeBinary(3),
  () => new DateDay(),
  () => new DateMillisecond(),
  () => new TimeMillisecond(),
  () => new TimestampMicrosecond('UTC'),
  () => new TimestampNanosecond(),
  () => new Dictionary(new Utf8(), new Int32()),
];

/** A column type, nested up to `depth` levels; unions only at the top (their builder needs routing). */
export function randomType(r: Random, depth: number, top: boolean): DataType {
  const kind = depth > 0 ? r.int(0, top ? 7 : 5) : 0;
  const child = () => new Field('item', randomType(r, depth - 1, false), true);
  switch (kind) {
    case 1:
      return new List(child());
    case 2:
      return new FixedSizeList(2, child());
    case 3:
      return new Struct([
        new Field('a', randomType(r, depth - 1, false), true),
        new Field('b', randomType(r, depth - 1, false), r.next() < 0.5),
      ]);
    case 4:
      return new Map_(
        new Field(
          'entries',
          new Struct<{ key: DataType; value: DataType }>([
            new Field<DataType>('key', new Utf8(), false),
            new Field('value', randomType(r, depth - 1, false), true),
          ]),
          false,
        ),
      );
    case 6:
    case 7: {
      const Union = kind === 6 ? SparseUnion : DenseUnion;
      return new Union(
        [0, 1],
        [new Field('i', new Int32(), true), new Field('s', new Utf8(), true)],
      );
    }
    default:
      return r.pick(LEAVES)();
  }
}

/** A value of `type` (null sometimes, where `nullable`), in the form apache-arrow's builders take. */
export function randomValue(r: Random, type: DataType, nullable: boolean): unknown {
  if (nullable && r.next() < 0.2) return null;
  const t = type as unknown as Record<string, unknown>;
  const children = type.children as readonly Field<DataType>[];
  const child = (i: number): Field<DataType> => {
    const field = children[i];
    if (field === undefined) throw new Error(`${type.toString()} has no child ${i}`);
    return field;
  };
  const id: Type = type.typeId;
  switch (id) {
    case Type.Null:
      return null;
    case Type.Bool:
      return r.next() < 0.5;
    case Type.Int: {
      const bits = t['bitWidth'] as number;
      const signed = t['isSigned'] as boolean;
      if (bits === 64) return BigInt(r.int(-1e9, 1e9)) * (signed ? 1n : 0n) + BigInt(r.int(0, 1e9));
      const span = 2 ** bits;
      return signed ? r.int(-span / 2, span / 2 - 1) : r.int(0, span - 1);
    }
    case Type.Float:
      return (t['precision'] as number) === 1 ? Math.fround(r.next() * 1e3 - 500) : r.next() * 1e9;
    case Type.Utf8:
    case Type.LargeUtf8:
      return Array.from({ length: r.int(0, 6) }, () => r.pick(['a', 'é', '✓', '𝄞', ' ', 'z'])).join(
        '',
      );
    case Type.Binary:
    case Type.LargeBinary:
      return Uint8Array.from({ length: r.int(0, 6) }, () => r.int(0, 255));
    case Type.FixedSizeBinary:
      return Uint8Array.from({ length: t['byteWidth'] as number }, () => r.int(0, 255));
    case Type.Date:
      return new Date(Date.UTC(2000 + r.int(0, 40), r.int(0, 11), r.int(1, 28)));
    case Type.Time:
      return r.int(0, 86_399_999);
    case Type.Timestamp:
      return r.int(0, 2e12);
    case Type.Dictionary:
      return r.pick(['red', 'green', 'blue']);
    case Type.List:
      return Array.from({ length: r.int(0, 3) }, () => randomValue(r, child(0).type, true));
    case Type.FixedSizeList:
      return Array.from({ length: t['listSize'] as number }, () =>
        randomValue(r, child(0).type, true),
      );
    case Type.Struct: {
      const out: Record<string, unknown> = {};
      for (const f of children) out[f.name] = randomValue(r, f.type, f.nullable);
      return out;
    }
    case Type.Map: {
      const value = (child(0).type.children as readonly Field<DataType>[])[1];
      const map = new Map<string, unknown>();
      for (let i = r.int(0, 3); i > 0; i--) {
        map.set(`k${r.int(0, 5)}`, value === undefined ? null : randomValue(r, value.type, true));
      }
      return map;
    }
    case Type.Union: // Int32 | Utf8
      return r.next() < 0.5 ? r.int(-100, 100) : r.pick(['x', 'yy', '']);
    default:
      throw new Error(`no value for ${type.toString()}`);
  }
}

export function randomSchema(r: Random): Schema {
  const fields = Array.from(
    { length: r.int(1, 4) },
    (_, i) => new Field(`c${i}`, randomType(r, 2, true), r.next() < 0.7),
  );
  return new Schema(fields);
}

/** A batch of `rows` random rows of `schema`. */
export function randomBatch(r: Random, schema: Schema, rows: number): RecordBatch {
  const children = schema.fields.map((field) => {
    const builder = makeBuilder({
      type: field.type,
      nullValues: [null],
      valueToChildTypeId: (_: unknown, value: unknown) => (typeof value === 'number' ? 0 : 1),
    } as Parameters<typeof makeBuilder>[0]);
    // A null-type column holds nulls however it is declared.
    const nullable = field.nullable || field.type.typeId === 1;
    for (let i = 0; i < rows; i++) builder.append(randomValue(r, field.type, nullable));
    return builder.finish().flush() as Data;
  });
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children }),
  );
}

/**
 * Values as JSON text: what two equal columns print alike (bigints as
 * strings, bytes as lists). Temporal columns print their integer storage:
 * apache-arrow's getters convert it to JavaScript numbers and throw beyond
 * 2^53, which valid Arrow may hold.
 */
export function printed(batch: RecordBatch): string {
  const columns = batch.schema.fields.map((field, i) => {
    const vector = batch.getChildAt(i);
    if (vector === null) return null;
    if (TEMPORAL.has(field.type.typeId)) {
      return vector.data.flatMap((d) =>
        Array.from(d.values as ArrayLike<unknown>).slice(0, d.length * d.stride),
      );
    }
    return [...vector];
  });
  return JSON.stringify(columns, (_, v: unknown) =>
    typeof v === 'bigint'
      ? `${v}n`
      : v instanceof Uint8Array
        ? [...v]
        : v instanceof Map
          ? [...v.entries()]
          : v,
  );
}

/** Date, Time, Timestamp, Duration. */
const TEMPORAL = new Set<Type>([Type.Date, Type.Time, Type.Timestamp, Type.Duration]);

/**
 * apache-arrow's getter for a temporal value inside a nested column converts
 * its storage to a JavaScript number and throws past 2^53: a limit of the
 * getter on valid data, not a reading of corrupt data.
 */
export function isUnsafeNumberGetter(error: unknown): boolean {
  return error instanceof TypeError && /is not safe to convert to a number/.test(error.message);
}
