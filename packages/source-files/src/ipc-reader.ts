import { MessageHeader, decodeIpcStream, type RenderedRows } from '@thalweg/stream-arrow';
import { ipcBodyCodecs } from '@thalweg/wire-compression';
import type { Data, RecordBatch } from 'apache-arrow';
import { FileSourceError } from './errors.js';
import type { OpenFile } from './file-access.js';
import { readSchema, type FileSchema } from './ipc-file-schema.js';
import {
  changed,
  checkMessageOrder,
  fromArrow,
  invalid,
  layoutOf,
  readAt,
  readHead,
  type IpcLayout,
} from './ipc-messages.js';
import { END_OF_FILE, NEED_READ, type FileRecord, type FileRecordReader } from './record-reader.js';

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

interface CurrentBatch {
  readonly at: number;
  readonly rows: number;
  row: number;
  /** The row `rendered` starts at. */
  readonly first: number;
  /** The rows from the first one read on, rendered into one buffer (planRows). */
  readonly rendered: RenderedRows;
  readonly time: ((row: number) => number | null) | undefined;
}

/**
 * The rows of one Arrow IPC file (stream or file format), one record batch
 * message in memory at a time. Each batch is checked in full before a row
 * of it is yielded: the message is put behind the file's schema as a
 * one-batch stream and decoded by stream-arrow's `decodeIpcStream`, which
 * bounds-checks the metadata, decompresses LZ4 and ZSTD bodies (with the
 * codecs of @thalweg/wire-compression), and checks every column's buffers,
 * offsets, nulls and UTF-8. A corrupt
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
    const layout = layoutOf(name, size, probe, tail);
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
    // A view of the batch's rendered buffer: a value kept alive keeps the batch's JSON alive.
    const { bytes, ends } = current.rendered;
    const at = row - current.first;
    return {
      value: bytes.subarray(ends[at - 1] ?? 0, ends[at]),
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
        first: skip,
        rendered: schema.rows.bind(columns)(skip, batch.numRows),
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
    if (head.header.headerType !== MessageHeader.RecordBatch)
      invalid(name, at, 'not a record batch');
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
      // Compressed bodies are decompressed within the same buffer budget.
      return decodeIpcStream(bytes, {
        codecs: ipcBodyCodecs,
        maxDecompressedBytes: this.options.maxBufferBytes,
      });
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
