import type { AvroCursor } from './avro-binary.js';
import { IcebergError } from './errors.js';

/**
 * A decoded Avro value: records are plain objects, unions the value of their
 * branch (unwrapped), enums their symbol, maps `Map`s, longs bigint, bytes
 * and fixed `Uint8Array` views into the file's block.
 */
export type AvroValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | readonly AvroValue[]
  | ReadonlyMap<string, AvroValue>
  | { readonly [field: string]: AvroValue };

/** Reads one value of a schema from a cursor. */
export type AvroDecoder = (cursor: AvroCursor) => AvroValue;

const PRIMITIVES: Record<string, AvroDecoder> = {
  null: () => null,
  boolean: (c) => c.boolean(),
  int: (c) => c.int(),
  long: (c) => c.long(),
  float: (c) => c.float(),
  double: (c) => c.double(),
  bytes: (c) => c.bytesValue(),
  string: (c) => c.string(),
};

/** Reads Avro's blocked encoding of arrays and maps: counts, a negative one followed by a byte size. */
function blocks(c: AvroCursor, item: () => void): void {
  for (;;) {
    let n = c.count();
    if (n === 0) return;
    if (n < 0) {
      n = -n;
      c.count(); // the block's byte size, there to allow skipping; we read every item
    }
    // every item Iceberg writes takes a byte at least: a larger count is a corrupt
    // one, refused here rather than looping (or allocating) for 2^60 null items
    if (n > c.bytes.length - c.pos)
      throw c.corrupt(`a block of ${n} items in ${c.bytes.length - c.pos} bytes`);
    for (let i = 0; i < n; i++) item();
  }
}

/**
 * Compiles an Avro schema (parsed JSON) into a decoder. Named types
 * (records, enums, fixed) may be referenced by name after their definition,
 * with or without their namespace, as the spec allows. Logical types are
 * decoded as their underlying type: the Iceberg fields we read need no more.
 * An unknown type fails here, naming `file`, before any data is read.
 */
export function compileSchema(schema: unknown, file: string): AvroDecoder {
  const named = new Map<string, AvroDecoder>();
  const bad = (reason: string): IcebergError =>
    new IcebergError('TWG_ICEBERG_AVRO_CORRUPT', file, `avro.schema: ${reason}`);

  function fullName(name: string, namespace: string | undefined): string {
    return name.includes('.') || namespace === undefined || namespace === ''
      ? name
      : `${namespace}.${name}`;
  }

  function compile(s: unknown, namespace: string | undefined): AvroDecoder {
    if (typeof s === 'string') {
      const primitive = PRIMITIVES[s];
      if (primitive !== undefined) return primitive;
      const ref = named.get(fullName(s, namespace)) ?? named.get(s);
      if (ref === undefined) throw bad(`unknown type ${JSON.stringify(s)}`);
      return ref;
    }
    if (Array.isArray(s)) {
      const branches = s.map((b) => compile(b, namespace));
      return (c) => {
        const at = c.pos;
        const i = c.count();
        const branch = branches[i];
        if (branch === undefined) throw c.corrupt(`union branch ${i} of ${branches.length}`, at);
        return branch(c);
      };
    }
    if (typeof s !== 'object' || s === null) throw bad(`not a schema: ${JSON.stringify(s)}`);
    const o = s as Record<string, unknown>;
    const type = o['type'];
    switch (type) {
      case 'record':
      case 'error': {
        const ns = typeof o['namespace'] === 'string' ? o['namespace'] : namespace;
        const name = fullName(String(o['name']), ns);
        const fields: { name: string; decode: AvroDecoder }[] = [];
        const decode: AvroDecoder = (c) => {
          const out: Record<string, AvroValue> = {};
          for (const f of fields) out[f.name] = f.decode(c);
          return out;
        };
        named.set(name, decode); // before the fields: a record may refer to itself
        if (!Array.isArray(o['fields'])) throw bad(`record ${name} has no fields array`);
        for (const f of o['fields'] as Record<string, unknown>[]) {
          fields.push({ name: String(f['name']), decode: compile(f['type'], ns) });
        }
        return decode;
      }
      case 'enum': {
        const symbols = o['symbols'];
        if (!Array.isArray(symbols)) throw bad(`enum ${String(o['name'])} has no symbols`);
        const decode: AvroDecoder = (c) => {
          const at = c.pos;
          const i = c.count();
          const symbol: unknown = symbols[i];
          if (typeof symbol !== 'string')
            throw c.corrupt(`enum index ${i} of ${symbols.length}`, at);
          return symbol;
        };
        named.set(fullName(String(o['name']), namespace), decode);
        return decode;
      }
      case 'fixed': {
        const size = o['size'];
        if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
          throw bad(`fixed ${String(o['name'])} has no size`);
        }
        const decode: AvroDecoder = (c) => c.fixed(size);
        named.set(fullName(String(o['name']), namespace), decode);
        return decode;
      }
      case 'array': {
        const item = compile(o['items'], namespace);
        return (c) => {
          const out: AvroValue[] = [];
          blocks(c, () => out.push(item(c)));
          return out;
        };
      }
      case 'map': {
        const value = compile(o['values'], namespace);
        return (c) => {
          const out = new Map<string, AvroValue>();
          blocks(c, () => out.set(c.string(), value(c)));
          return out;
        };
      }
      default:
        // {"type": "long", "logicalType": ...} and the like
        if (typeof type === 'string' || Array.isArray(type)) return compile(type, namespace);
        throw bad(`unknown type ${JSON.stringify(type)}`);
    }
  }

  return compile(schema, undefined);
}
