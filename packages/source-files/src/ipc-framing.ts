import { FileSourceError } from './errors.js';

/**
 * The framing of Arrow IPC as this source walks it, without decoding a
 * message body: enough to know where each message starts and ends, what it
 * is and how many rows a batch holds. Everything read is bounds-checked
 * here, because the FlatBuffers runtime apache-arrow uses does not verify
 * (see stream-arrow's message-bounds.ts); a full check of every batch this
 * source yields rows from is `decodeIpcStream` in @thalweg/stream-arrow.
 *
 * Stream format: messages from byte 0. File format: `ARROW1` and padding to
 * byte 8, the same messages, a footer, its i32 length, `ARROW1`. The footer
 * indexes the messages for random access; this source reads them in order,
 * so it checks the magic and that the footer length fits, and the message
 * region ends where the footer begins. The footer also holds the schema,
 * and some writers (apache-arrow's JavaScript one) put it only there: then
 * the schema is read from the footer (`footer-schema.ts`).
 *
 * A message: a 0xFFFFFFFF continuation marker and an i32 metadata length
 * (or, before Arrow 0.15, the bare length), the `Message` flatbuffer, the
 * body. A zero length is the end-of-stream marker.
 */
export const MAGIC = 'ARROW1';
const FILE_HEAD = 8;
export const FILE_TAIL = 10;

export const HEADER_SCHEMA = 1;
export const HEADER_DICTIONARY = 2;
export const HEADER_RECORD_BATCH = 3;

export interface IpcLayout {
  readonly kind: 'stream' | 'file';
  /** Where the first message starts. */
  readonly regionStart: number;
  /** Where the messages end: the file size, or the footer of the file format. */
  readonly regionEnd: number;
}

/** The layout, from the first 8 and the last 10 bytes of a `size`-byte file. */
export function ipcLayout(
  file: string,
  size: number,
  head: Uint8Array,
  tail: Uint8Array,
): IpcLayout {
  if (!hasMagic(head, 0)) return { kind: 'stream', regionStart: 0, regionEnd: size };
  if (size < FILE_HEAD + FILE_TAIL || !hasMagic(tail, FILE_TAIL - MAGIC.length)) {
    invalid(
      file,
      Math.max(0, size - MAGIC.length),
      'an Arrow IPC file without its trailing ARROW1: truncated',
    );
  }
  const footerLength = view(tail).getInt32(0, true);
  const footerAt = size - FILE_TAIL - footerLength;
  if (footerLength <= 0 || footerAt < FILE_HEAD) {
    invalid(file, size - FILE_TAIL, `footer length ${footerLength} does not fit the file`);
  }
  return { kind: 'file', regionStart: FILE_HEAD, regionEnd: footerAt };
}

export type MessagePrefix =
  | { readonly kind: 'end'; readonly prefixLength: number }
  | { readonly kind: 'message'; readonly prefixLength: number; readonly metadataLength: number };

/** Bytes to read at a message start to know its prefix. */
export const PREFIX_BYTES = 8;

/** The prefix at `at`, from up to 8 bytes read there (`bytes` is shorter only near the end). */
export function messagePrefix(
  file: string,
  bytes: Uint8Array,
  at: number,
  regionEnd: number,
): MessagePrefix {
  const left = regionEnd - at;
  if (left < 4) invalid(file, at, `${left} trailing bytes are not an IPC message`);
  const v = view(bytes);
  let prefixLength = 4;
  let length = v.getInt32(0, true);
  if (length === -1) {
    if (left < 8) invalid(file, at, 'a continuation marker without a metadata length');
    length = v.getInt32(4, true);
    prefixLength = 8;
  }
  if (length === 0) {
    if (left > prefixLength) {
      invalid(
        file,
        at + prefixLength,
        `${left - prefixLength} bytes after the end-of-stream marker`,
      );
    }
    return { kind: 'end', prefixLength };
  }
  if (length < 0 || length > left - prefixLength) {
    invalid(
      file,
      at,
      `metadata length ${length} does not fit the ${left - prefixLength} bytes left`,
    );
  }
  return { kind: 'message', prefixLength, metadataLength: length };
}

/** Footer (File.fbs): slot 1 is the schema table; its position in `footer`. */
export function footerSchemaTable(file: string, footer: Uint8Array, at: number): number {
  const fb = new Flat(file, footer, at);
  const schema = fb.child(fb.table(fb.u32(0)), 1);
  if (schema === undefined) invalid(file, at, 'the footer holds no schema');
  return schema;
}

export interface MessageHeader {
  readonly headerType: number;
  readonly bodyLength: number;
  /** A record batch's row count; 0 for other messages. */
  readonly rows: number;
}

/**
 * Message.fbs `Message` (slot 1 header_type u8, slot 2 header, slot 3
 * bodyLength i64) and, for a batch, `RecordBatch` slot 0 length i64.
 */
export function messageHeader(file: string, metadata: Uint8Array, at: number): MessageHeader {
  const fb = new Flat(file, metadata, at);
  const root = fb.table(fb.u32(0));
  const headerType = fb.u8(root, 1);
  const bodyLength = fb.i64(root, 3, 'body length');
  let rows = 0;
  if (headerType === HEADER_RECORD_BATCH) {
    const header = fb.child(root, 2);
    if (header === undefined) invalid(file, at, 'a record batch message without its header');
    rows = fb.i64(header, 0, 'row count');
  } else if (headerType !== HEADER_SCHEMA && headerType !== HEADER_DICTIONARY) {
    invalid(file, at, `message header type ${headerType} is not a schema or a batch`);
  }
  return { headerType, bodyLength, rows };
}

class Flat {
  private readonly v: DataView;

  constructor(
    private readonly file: string,
    private readonly bytes: Uint8Array,
    private readonly at: number,
  ) {
    this.v = view(bytes);
  }

  u32(pos: number): number {
    this.need(pos, 4);
    return this.v.getUint32(pos, true);
  }

  table(pos: number): number {
    this.need(pos, 4);
    const vtable = pos - this.v.getInt32(pos, true);
    this.need(vtable, 4);
    this.need(vtable, this.v.getUint16(vtable, true));
    this.need(pos, this.v.getUint16(vtable + 2, true));
    return pos;
  }

  u8(table: number, slot: number): number {
    const pos = this.field(table, slot);
    if (pos === undefined) return 0;
    this.need(pos, 1);
    return this.v.getUint8(pos);
  }

  i64(table: number, slot: number, what: string): number {
    const pos = this.field(table, slot);
    if (pos === undefined) return 0;
    this.need(pos, 8);
    const n = this.v.getBigInt64(pos, true);
    if (n < 0n || n > BigInt(Number.MAX_SAFE_INTEGER))
      invalid(this.file, this.at, `${what} ${n} is invalid`);
    return Number(n);
  }

  child(table: number, slot: number): number | undefined {
    const pos = this.field(table, slot);
    return pos === undefined ? undefined : this.table(pos + this.u32(pos));
  }

  private field(table: number, slot: number): number | undefined {
    const vtable = table - this.v.getInt32(table, true);
    if (4 + 2 * slot + 2 > this.v.getUint16(vtable, true)) return undefined;
    const relative = this.v.getUint16(vtable + 4 + 2 * slot, true);
    return relative === 0 ? undefined : table + relative;
  }

  private need(pos: number, length: number): void {
    if (pos < 0 || pos + length > this.bytes.byteLength) {
      invalid(
        this.file,
        this.at,
        `message metadata refers outside its ${this.bytes.byteLength} bytes (at ${pos})`,
      );
    }
  }
}

function hasMagic(bytes: Uint8Array, at: number): boolean {
  if (bytes.byteLength < at + MAGIC.length) return false;
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[at + i] !== MAGIC.charCodeAt(i)) return false;
  }
  return true;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function invalid(file: string, position: number, reason: string): never {
  throw new FileSourceError('TWG_FILE_IPC_INVALID', reason, { file, position });
}

/**
 * The message sequence this source reads: one schema, first; then record
 * batches. A dictionary batch is refused (no column type read here uses
 * one), and so is a second schema, which IPC streams do not allow and
 * apache-arrow would silently switch to.
 */
export function checkMessageOrder(
  file: string,
  headerType: number,
  at: number,
  first: boolean,
  layout: IpcLayout['kind'],
): void {
  // The file format may leave the schema to its footer (see footer-schema.ts).
  if (first && headerType !== HEADER_SCHEMA && layout === 'stream') {
    invalid(file, at, 'the stream does not start with a schema');
  }
  if (!first && headerType === HEADER_SCHEMA) {
    invalid(file, at, 'a schema message after the first message');
  }
  if (headerType === HEADER_DICTIONARY) {
    throw new FileSourceError(
      'TWG_FILE_IPC_UNSUPPORTED',
      'a dictionary batch: dictionary-encoded columns are not read',
      { file, position: at },
    );
  }
}
