import { ArrowBatchError } from './errors.js';

/**
 * apache-arrow decodes IPC metadata with the FlatBuffers runtime, which does
 * not verify a buffer: a corrupted vector length (the field nodes of a batch,
 * the fields of a schema) makes it build billions of objects from reads past
 * the end, which return 0 instead of failing, until the process runs out of
 * memory. This walks the parts of a `Message` that the decoder iterates and
 * checks that every reference and every vector lies inside the metadata
 * before apache-arrow sees it, so corruption is an error, not an abort.
 *
 * FlatBuffers layout: a table starts with an i32 offset back to its vtable
 * (u16 vtable size, u16 table size, u16 per field, 0 = absent); a reference
 * is a u32 offset forward from where it is stored; a vector is a u32 count.
 */
const MESSAGE = { headerType: 1, header: 2, customMetadata: 4 } as const;
const SCHEMA = { fields: 1, customMetadata: 2, features: 3 } as const;
const FIELD = {
  name: 0,
  typeType: 2,
  type: 3,
  dictionary: 4,
  children: 5,
  customMetadata: 6,
} as const;
const BATCH = { nodes: 1, buffers: 2, compression: 3, variadic: 4 } as const;
const DICTIONARY_DATA = 1;
const FOOTER = { schema: 1, dictionaries: 2, recordBatches: 3, customMetadata: 4 } as const;
/** File.fbs `Block`: offset i64, metaDataLength i32 (+4 padding), bodyLength i64. */
const BLOCK_BYTES = 24;
const MAX_DEPTH = 64;
const TYPE_TIMESTAMP = 10;
const TYPE_UNION = 14;
/** Schema.fbs `Type` tags up to LargeListView (26); 0 is NONE. */
const LAST_TYPE_TAG = 26;
/**
 * Valid Arrow types this reader does not read: apache-arrow 21 cannot decode
 * run-end encoded, list view and large list view columns, and large lists
 * and the view types are not checked by decoded-batch-check.ts. They are
 * refused from the schema, before any batch, as unsupported: never as
 * corrupt, never decoded wrongly.
 */
const UNSUPPORTED_TYPES: Readonly<Record<number, string>> = {
  21: 'LargeList',
  22: 'RunEndEncoded',
  23: 'BinaryView',
  24: 'Utf8View',
  25: 'ListView',
  26: 'LargeListView',
};

export function checkMessageBounds(metadata: Uint8Array, offset: number): void {
  const reader = new Bounds(metadata, offset);
  const root = reader.table(reader.u32(0), 'message');
  reader.keyValues(root, MESSAGE.customMetadata, 'custom metadata');
  const headerType = reader.u8Field(root, MESSAGE.headerType);
  const header = reader.child(root, MESSAGE.header, 'message header');
  if (header === undefined) return;
  if (headerType === 1) {
    reader.schema(header);
  } else if (headerType === 3 || headerType === 2) {
    const batch =
      headerType === 3 ? header : reader.child(header, DICTIONARY_DATA, 'dictionary data');
    if (batch === undefined) return;
    reader.vector(batch, BATCH.nodes, 16, 'field nodes');
    reader.vector(batch, BATCH.buffers, 16, 'buffers');
    reader.vector(batch, BATCH.variadic, 8, 'variadic buffer counts');
    reader.child(batch, BATCH.compression, 'body compression');
  }
}

/** Where a file footer says a message is: byte offset, prefix + metadata length, body length. */
export interface FileBlock {
  readonly offset: number;
  readonly metaDataLength: number;
  readonly bodyLength: number;
}

/**
 * The same check for the footer of an IPC file (File.fbs `Footer`: version,
 * schema, dictionary blocks, record batch blocks, custom metadata), which
 * apache-arrow decodes just as unverified; returns the blocks it lists.
 */
export function checkFooterBounds(
  footer: Uint8Array,
  offset: number,
): { readonly dictionaries: FileBlock[]; readonly recordBatches: FileBlock[] } {
  const reader = new Bounds(footer, offset);
  const root = reader.table(reader.u32(0), 'footer');
  reader.keyValues(root, FOOTER.customMetadata, 'footer metadata');
  const schema = reader.child(root, FOOTER.schema, 'footer schema');
  if (schema !== undefined) reader.schema(schema);
  return {
    dictionaries: reader.blocks(root, FOOTER.dictionaries, 'dictionary blocks'),
    recordBatches: reader.blocks(root, FOOTER.recordBatches, 'record batch blocks'),
  };
}

/** A bounds-checked FlatBuffers walker over one flatbuffer; failures name `offset`, where its message starts. */
export class Bounds {
  private readonly view: DataView;
  private fieldsSeen = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly offset: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  u32(at: number): number {
    this.need(at, 4, 'reference');
    return this.view.getUint32(at, true);
  }

  /** A table at `at`, with its vtable checked; returns its position. */
  table(at: number, what: string): number {
    this.need(at, 4, what);
    const vtable = at - this.view.getInt32(at, true);
    this.need(vtable, 4, `${what} vtable`);
    this.need(vtable, this.view.getUint16(vtable, true), `${what} vtable`);
    this.need(at, this.view.getUint16(vtable + 2, true), what);
    return at;
  }

  u8Field(table: number, slot: number): number {
    const at = this.field(table, slot);
    if (at === undefined) return 0;
    this.need(at, 1, 'field');
    return this.view.getUint8(at);
  }

  child(table: number, slot: number, what: string): number | undefined {
    const at = this.field(table, slot);
    return at === undefined ? undefined : this.table(at + this.u32(at), what);
  }

  vector(table: number, slot: number, elementSize: number, what: string): number {
    const at = this.field(table, slot);
    if (at === undefined) return 0;
    const start = at + this.u32(at);
    const count = this.u32(start);
    this.need(start + 4, count * elementSize, what);
    return count;
  }

  /** The element bytes of a vector field, or undefined when the field is absent. */
  vectorBytes(
    table: number,
    slot: number,
    elementSize: number,
    what: string,
  ): Uint8Array | undefined {
    const at = this.field(table, slot);
    if (at === undefined) return undefined;
    const count = this.vector(table, slot, elementSize, what);
    const start = at + this.u32(at) + 4;
    return this.bytes.subarray(start, start + count * elementSize);
  }

  schema(table: number): void {
    this.keyValues(table, SCHEMA.customMetadata, 'schema metadata');
    this.vector(table, SCHEMA.features, 8, 'schema features');
    this.fields(table, SCHEMA.fields, 0);
  }

  /** A vector of `Block` structs, read. */
  blocks(table: number, slot: number, what: string): FileBlock[] {
    const count = this.vector(table, slot, BLOCK_BYTES, what);
    if (count === 0) return [];
    const at = this.field(table, slot) ?? 0;
    const start = at + this.u32(at) + 4;
    return Array.from({ length: count }, (_, i) => {
      const block = start + BLOCK_BYTES * i;
      return {
        offset: Number(this.view.getBigInt64(block, true)),
        metaDataLength: this.view.getInt32(block + 8, true),
        bodyLength: Number(this.view.getBigInt64(block + 16, true)),
      };
    });
  }

  /** A vector of `Field` tables, their children recursively. */
  fields(table: number, slot: number, depth: number): void {
    if (depth > MAX_DEPTH) this.fail(table, 'fields nested too deep');
    const count = this.vector(table, slot, 4, 'fields');
    if (count === 0) return;
    const at = this.field(table, slot) ?? 0;
    const start = at + this.u32(at) + 4;
    for (let i = 0; i < count; i++) {
      // Each field of a schema is referenced once, from a 4-byte vector
      // slot: more fields than that are references shared within the tree,
      // which decoders expand exponentially (until memory runs out).
      if (++this.fieldsSeen > this.bytes.byteLength / 4) {
        this.fail(table, 'fields refer to each other: the field tree is not a tree');
      }
      const field = this.table(start + 4 * i + this.u32(start + 4 * i), 'field');
      const name = this.vector(field, FIELD.name, 1, 'field name');
      const tag = this.typeTag(field, name);
      this.keyValues(field, FIELD.customMetadata, 'field metadata');
      const type = this.child(field, FIELD.type, 'field type');
      // The vectors inside type tables: a union's type ids, a timestamp's zone.
      if (type !== undefined && tag === TYPE_UNION) this.vector(type, 1, 4, 'union type ids');
      if (type !== undefined && tag === TYPE_TIMESTAMP) this.vector(type, 1, 1, 'time zone');
      const dictionary = this.child(field, FIELD.dictionary, 'field dictionary');
      if (dictionary !== undefined) this.child(dictionary, 1, 'dictionary index type');
      this.fields(field, FIELD.children, depth + 1);
    }
  }

  /** A vector of `KeyValue` tables (custom metadata), each key and value string checked. */
  keyValues(table: number, slot: number, what: string): void {
    const count = this.vector(table, slot, 4, what);
    if (count === 0) return;
    const at = this.field(table, slot) ?? 0;
    const start = at + this.u32(at) + 4;
    for (let i = 0; i < count; i++) {
      const entry = this.table(start + 4 * i + this.u32(start + 4 * i), what);
      this.vector(entry, 0, 1, `${what} key`);
      this.vector(entry, 1, 1, `${what} value`);
    }
  }

  /** Refuses a type tag the format does not define (corrupt) or this reader does not read; returns it. */
  private typeTag(field: number, nameLength: number): number {
    const tag = this.u8Field(field, FIELD.typeType);
    if (tag === 0 || tag > LAST_TYPE_TAG)
      this.fail(field, `field type tag ${tag} is not an Arrow type`);
    const unsupported = UNSUPPORTED_TYPES[tag];
    if (unsupported === undefined) return tag;
    const at = this.field(field, FIELD.name);
    const start = at === undefined ? 0 : at + this.u32(at) + 4;
    const name = new TextDecoder().decode(this.bytes.subarray(start, start + nameLength));
    throw new ArrowBatchError('TWG_ARROW_IPC_UNSUPPORTED', `${unsupported} columns are not read`, {
      field: name,
      offset: this.offset + field,
    });
  }

  /**
   * Where a field of a table is, exactly as the FlatBuffers runtime finds it
   * (`__offset`: a slot exists when its vtable offset is below the vtable
   * size, both read as signed 16-bit), so that the walk checks the bytes
   * apache-arrow will read and not others: an odd vtable size or a field
   * offset of 0x8000 and above would otherwise be read one way here and
   * another way there.
   */
  field(table: number, slot: number): number | undefined {
    const vtable = table - this.view.getInt32(table, true);
    const slotAt = 4 + 2 * slot;
    this.need(vtable, 2, 'vtable');
    if (!(slotAt < this.view.getInt16(vtable, true))) return undefined;
    this.need(vtable + slotAt, 2, 'vtable');
    const relative = this.view.getInt16(vtable + slotAt, true);
    return relative === 0 ? undefined : table + relative;
  }

  private need(at: number, length: number, what: string): void {
    if (at < 0 || length < 0 || at + length > this.bytes.byteLength) {
      this.fail(at, `${what} reaches outside the ${this.bytes.byteLength}-byte metadata`);
    }
  }

  /**
   * The refusal names where the message (or footer) starts, never
   * `offset + at`: `at` may come from the corrupt bytes themselves (a
   * garbage reference gives a position billions of bytes away), so it is
   * only told, in the reason, when it lies inside the flatbuffer.
   */
  private fail(at: number, reason: string): never {
    const where =
      Number.isSafeInteger(at) && at >= 0 && at < this.bytes.byteLength
        ? ` (flatbuffer byte ${at})`
        : '';
    throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason + where, { offset: this.offset });
  }
}
