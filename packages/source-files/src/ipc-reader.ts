import { ArrowBatchError, decodeIpcStream } from '@thalweg/stream-arrow';
import { RecordBatchReader, type Data, type RecordBatch, type Schema } from 'apache-arrow';
import { FileSourceError, readFailed } from './errors.js';
import { readFully, type OpenFile } from './file-access.js';
import { schemaMessageFromFooter } from './footer-schema.js';
import {
  FILE_TAIL,
  HEADER_RECORD_BATCH,
  HEADER_SCHEMA,
  PREFIX_BYTES,
  checkMessageOrder,
  invalid,
  ipcLayout,
  messageHeader,
  messagePrefix,
  type IpcLayout,
  type MessageHeader,
} from './ipc-framing.js';
import { END_OF_FILE, NEED_READ, type FileRecord, type FileRecordReader } from './record-reader.js';
import { planRows, planTimestamp, type RowPlan, type TimestampPlan } from './row-json.js';

export interface IpcReaderOptions {
  readonly name: string;
  readonly size: number;
  /** The file's modification time: the timestamp of a row with no time of its own. */
  readonly timestamp: number;
  readonly maxBufferBytes: number;
  readonly timestampColumn: string | undefined;
}

/** Where to start: a record batch message (or 0, or the end) and the rows of it already read. */
export interface IpcStart {
  readonly position: number;
  readonly skipRows: number;
}

/** The file's schema message and what it decides: how a row renders, where its time is. */
interface FileSchema {
  readonly bytes: Uint8Array;
  /** Where the schema is: its message, or the footer it was built from. */
  readonly at: number;
  /** False for a schema built from the footer: an offset in it is not a file position. */
  readonly exact: boolean;
  /** Where the first message after the schema starts. */
  readonly batchesAt: number;
  readonly rows: RowPlan;
  readonly time: TimestampPlan | undefined;
}

interface CurrentBatch {
  readonly at: number;
  readonly rows: number;
  row: number;
  readonly render: (row: number) => string;
  readonly time: ((row: number) => number | null) | undefined;
}

const EOS = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

/**
 * The rows of one Arrow IPC file (stream or file format), one record batch
 * message in memory at a time. Each batch is checked in full before a row
 * of it is yielded: the message is put behind the file's schema as a
 * one-batch stream and decoded by stream-arrow's `decodeIpcStream`, which
 * bounds-checks the metadata, refuses compressed bodies and dictionaries,
 * and checks every column's buffers, offsets, nulls and UTF-8. A corrupt
 * file fails with its name and the byte position of the bad message.
 */
export class IpcReader implements FileRecordReader {
  private current: CurrentBatch | undefined;
  private nextMessage: number;
  private done: boolean;
  private skipRows: number;
  private maxHeld = 0;
  private read = 0;

  private constructor(
    private readonly file: OpenFile,
    private readonly options: IpcReaderOptions,
    private readonly layout: IpcLayout,
    private readonly schema: FileSchema | undefined,
    start: IpcStart,
  ) {
    this.nextMessage = start.position === 0 ? (schema?.batchesAt ?? 0) : start.position;
    this.skipRows = start.skipRows;
    this.done = schema === undefined || this.nextMessage >= layout.regionEnd;
    this.maxHeld = schema?.bytes.byteLength ?? 0;
  }

  static async open(
    file: OpenFile,
    options: IpcReaderOptions,
    start: IpcStart,
  ): Promise<IpcReader> {
    const { name, size } = options;
    // An empty file holds no rows: writers create a file before they fill it.
    if (size === 0)
      return new IpcReader(
        file,
        options,
        { kind: 'stream', regionStart: 0, regionEnd: 0 },
        undefined,
        start,
      );
    const probe = new Uint8Array(Math.min(8, size));
    const tail = new Uint8Array(Math.min(10, size));
    let read = await readAt(file, name, probe, 0);
    read += await readAt(file, name, tail, size - tail.byteLength);
    const layout = ipcLayout(name, size, probe, tail);
    const { schema, bytesRead } = await readSchema(file, options, layout);
    const reader = new IpcReader(file, options, layout, schema, start);
    reader.read = read + bytesRead;
    return reader;
  }

  get nextPosition(): number {
    return this.current?.at ?? this.nextMessage;
  }

  get maxBufferBytes(): number {
    return this.maxHeld;
  }

  get bytesRead(): number {
    return this.read;
  }

  take(): FileRecord | typeof NEED_READ | typeof END_OF_FILE {
    const current = this.current;
    if (current === undefined) return this.done ? END_OF_FILE : NEED_READ;
    const row = current.row++;
    if (current.row === current.rows) this.current = undefined;
    return {
      value: Buffer.from(current.render(row), 'utf8'),
      timestamp: current.time?.(row) ?? this.options.timestamp,
    };
  }

  async fill(): Promise<void> {
    const schema = this.schema;
    while (this.current === undefined && !this.done && schema !== undefined) {
      const at = this.nextMessage;
      if (at >= this.layout.regionEnd) {
        this.done = true;
        return;
      }
      const message = await this.readMessage(at, schema.bytes);
      if (message === 'end') {
        this.done = true;
        return;
      }
      const batch = this.decode(message.bytes, at, schema);
      this.nextMessage = message.end;
      if (batch.numRows === 0) continue;
      const skip = this.skipRows;
      this.skipRows = 0;
      if (skip >= batch.numRows) {
        throw new FileSourceError(
          'TWG_FILE_CHANGED',
          `the batch here holds ${batch.numRows} rows, the cursor skips ${skip}: the file changed since the seek`,
          { file: this.options.name, position: at },
        );
      }
      // decodeIpcStream checked that every column is one chunk of numRows values.
      const columns = batch.schema.fields.map((_, i) => batch.getChildAt(i)?.data[0]) as Data[];
      this.current = {
        at,
        rows: batch.numRows,
        row: skip,
        render: schema.rows.bind(columns),
        time: schema.time?.(columns, at),
      };
    }
  }

  /** A record batch message behind the schema bytes, as one buffer; 'end' at the end marker. */
  private async readMessage(
    at: number,
    schemaBytes: Uint8Array,
  ): Promise<'end' | { readonly bytes: Uint8Array; readonly end: number }> {
    const { name, maxBufferBytes } = this.options;
    const head = await readHead(this.file, name, at, this.layout.regionEnd);
    this.read += head.bytesRead;
    if (head.kind === 'end') return 'end';
    checkMessageOrder(name, head.header.headerType, at, false, this.layout.kind);
    if (head.header.headerType !== HEADER_RECORD_BATCH) invalid(name, at, 'not a record batch');
    const length = head.metadata.byteLength + head.header.bodyLength;
    const total = schemaBytes.byteLength + length;
    if (total > maxBufferBytes) {
      throw new FileSourceError(
        'TWG_FILE_RECORD_TOO_LARGE',
        `a record batch message of ${length} bytes (with the schema, ${total}) is larger than maxBufferBytes (${maxBufferBytes})`,
        { file: name, position: at },
      );
    }
    const bytes = new Uint8Array(total);
    bytes.set(schemaBytes, 0);
    bytes.set(head.metadata, schemaBytes.byteLength);
    const bodyAt = at + head.metadata.byteLength;
    const got = await readAt(
      this.file,
      name,
      bytes.subarray(schemaBytes.byteLength + head.metadata.byteLength),
      bodyAt,
    );
    if (got < head.header.bodyLength) changed(name, bodyAt + got);
    this.read += got;
    this.maxHeld = Math.max(this.maxHeld, total);
    return { bytes, end: at + length };
  }

  private decode(bytes: Uint8Array, at: number, schema: FileSchema): RecordBatch {
    try {
      return decodeIpcStream(bytes);
    } catch (cause) {
      const length = schema.bytes.byteLength;
      throw fromArrow(
        cause,
        this.options.name,
        (offset) =>
          offset >= length ? at + offset - length : schema.exact ? schema.at + offset : schema.at,
        at,
      );
    }
  }
}

/** A message's prefix and metadata (read) and its header (parsed), or the end marker. */
type Head =
  | { readonly kind: 'end'; readonly bytesRead: number }
  | {
      readonly kind: 'message';
      readonly bytesRead: number;
      /** The prefix and the metadata, as in the file. */
      readonly metadata: Uint8Array;
      readonly header: MessageHeader;
    };

async function readHead(
  file: OpenFile,
  name: string,
  at: number,
  regionEnd: number,
): Promise<Head> {
  const probe = new Uint8Array(Math.min(PREFIX_BYTES, regionEnd - at));
  const got = await readAt(file, name, probe, at);
  if (got < probe.byteLength) changed(name, at + got);
  const prefix = messagePrefix(name, probe, at, regionEnd);
  if (prefix.kind === 'end') return { kind: 'end', bytesRead: got };
  const metadata = new Uint8Array(prefix.prefixLength + prefix.metadataLength);
  const more = await readAt(file, name, metadata, at);
  if (more < metadata.byteLength) changed(name, at + more);
  const header = messageHeader(name, metadata.subarray(prefix.prefixLength), at);
  const bodyEnd = at + metadata.byteLength + header.bodyLength;
  if (bodyEnd > regionEnd) {
    invalid(
      name,
      at,
      `body of ${header.bodyLength} bytes does not fit the ${regionEnd - at - metadata.byteLength} left`,
    );
  }
  return { kind: 'message', bytesRead: got + more, metadata, header };
}

/**
 * The file's schema: its first message, or for a file-format file whose
 * writer put the schema only in the footer, a schema message built from the
 * footer. Checked by the same decode as every batch: behind it an
 * end-of-stream marker makes a stream with no batch, which
 * `decodeIpcStream` scans and bounds-checks in full before it refuses it for
 * holding no batch; only that refusal means the schema is sound. Its types
 * are then checked against what a row renders.
 */
async function readSchema(
  file: OpenFile,
  options: IpcReaderOptions,
  layout: IpcLayout,
): Promise<{ schema: FileSchema; bytesRead: number }> {
  const { name, size, maxBufferBytes } = options;
  const at = layout.regionStart;
  const head = at < layout.regionEnd ? await readHead(file, name, at, layout.regionEnd) : undefined;
  let bytesRead = head?.bytesRead ?? 0;
  let placed: { bytes: Uint8Array; at: number; batchesAt: number; exact: boolean };
  if (head?.kind === 'message' && head.header.headerType === HEADER_SCHEMA) {
    if (head.header.bodyLength !== 0) invalid(name, at, 'a schema message with a body');
    placed = { bytes: head.metadata, at, batchesAt: at + head.metadata.byteLength, exact: true };
  } else if (layout.kind === 'file') {
    const footerAt = layout.regionEnd;
    const footer = new Uint8Array(size - FILE_TAIL - footerAt);
    if (footer.byteLength > maxBufferBytes) {
      throw new FileSourceError(
        'TWG_FILE_RECORD_TOO_LARGE',
        `a footer of ${footer.byteLength} bytes is larger than maxBufferBytes (${maxBufferBytes})`,
        { file: name, position: footerAt },
      );
    }
    const got = await readAt(file, name, footer, footerAt);
    if (got < footer.byteLength) changed(name, footerAt + got);
    bytesRead += got;
    placed = {
      bytes: schemaMessageFromFooter(name, footer, footerAt),
      at: footerAt,
      batchesAt: at,
      exact: false,
    };
  } else {
    if (head === undefined) return invalid(name, at, 'no schema message');
    if (head.kind === 'end') return invalid(name, at, 'the stream ends before its schema');
    checkMessageOrder(name, head.header.headerType, at, true, layout.kind);
    return invalid(name, at, 'the stream does not start with a schema');
  }
  const probe = new Uint8Array(placed.bytes.byteLength + EOS.byteLength);
  probe.set(placed.bytes, 0);
  probe.set(EOS, placed.bytes.byteLength);
  try {
    decodeIpcStream(probe);
  } catch (cause) {
    if (!(cause instanceof ArrowBatchError && cause.code === 'TWG_ARROW_IPC_BATCH_COUNT')) {
      throw fromArrow(
        cause,
        name,
        (offset) => (placed.exact ? placed.at + offset : placed.at),
        placed.at,
      );
    }
  }
  let schema: Schema;
  try {
    schema = RecordBatchReader.from(probe).open().schema;
  } catch (cause) {
    return invalid(name, placed.at, `apache-arrow could not read the schema: ${String(cause)}`);
  }
  const column = options.timestampColumn;
  return {
    bytesRead,
    schema: {
      bytes: placed.bytes,
      at: placed.at,
      exact: placed.exact,
      batchesAt: placed.batchesAt,
      rows: planRows(name, schema),
      time: column === undefined ? undefined : planTimestamp(name, schema, column),
    },
  };
}

function fromArrow(
  cause: unknown,
  name: string,
  position: (offset: number) => number,
  at: number,
): FileSourceError {
  if (!(cause instanceof ArrowBatchError)) {
    return new FileSourceError(
      'TWG_FILE_IPC_INVALID',
      `cannot be read: ${String(cause)}`,
      { file: name, position: at },
      { cause },
    );
  }
  const code =
    cause.code === 'TWG_ARROW_IPC_COMPRESSED' ? 'TWG_FILE_IPC_UNSUPPORTED' : 'TWG_FILE_IPC_INVALID';
  return new FileSourceError(
    code,
    cause.message,
    {
      file: name,
      position: cause.offset === undefined ? at : position(cause.offset),
      ...(cause.field === undefined ? {} : { field: `column ${JSON.stringify(cause.field)}` }),
    },
    { cause },
  );
}

async function readAt(
  file: OpenFile,
  name: string,
  into: Uint8Array,
  position: number,
): Promise<number> {
  try {
    return await readFully(file, into, 0, into.byteLength, position);
  } catch (cause) {
    throw readFailed(name, `reading ${into.byteLength} bytes at ${position}`, cause);
  }
}

function changed(name: string, position: number): never {
  throw new FileSourceError(
    'TWG_FILE_CHANGED',
    'the file ends before the size it had when the set was opened: files must not change while read',
    { file: name, position },
  );
}
