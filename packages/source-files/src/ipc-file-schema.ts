import {
  IPC_FILE_TAIL,
  MessageHeader,
  decodeIpcSchema,
  planRows,
  planTimestamp,
  schemaMessageFromFooter,
  type RowPlan,
  type TimestampPlan,
} from '@thalweg/stream-arrow';
import type { Schema } from 'apache-arrow';
import { FileSourceError } from './errors.js';
import type { OpenFile } from './file-access.js';
import type { IpcReaderOptions } from './ipc-reader.js';
import {
  changed,
  checkMessageOrder,
  fromArrow,
  invalid,
  readAt,
  readHead,
  type IpcLayout,
} from './ipc-messages.js';

/** The file's schema message and what it decides: how a row renders, where its time is. */
export interface FileSchema {
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

/**
 * The file's schema: its first message, or for a file-format file whose
 * writer put the schema only in the footer, a schema message built from the
 * footer (stream-arrow's `schemaMessageFromFooter`). Read by stream-arrow's
 * `decodeIpcSchema`, the same reader as every batch (bounds, framing, types
 * it does not read); its types are then checked against what a row renders.
 */
export async function readSchema(
  file: OpenFile,
  options: IpcReaderOptions,
  layout: IpcLayout,
): Promise<{ schema: FileSchema; bytesRead: number }> {
  const { name, size, maxBufferBytes } = options;
  const at = layout.regionStart;
  const head = at < layout.regionEnd ? await readHead(file, name, at, layout.regionEnd) : undefined;
  let bytesRead = head?.bytesRead ?? 0;
  let placed: { bytes: Uint8Array; at: number; batchesAt: number; exact: boolean };
  if (head?.kind === 'message' && head.header.headerType === MessageHeader.Schema) {
    placed = { bytes: head.metadata, at, batchesAt: at + head.metadata.byteLength, exact: true };
  } else if (layout.kind === 'file') {
    const footerAt = layout.regionEnd;
    const footer = new Uint8Array(size - IPC_FILE_TAIL - footerAt);
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
    let bytes: Uint8Array;
    try {
      bytes = schemaMessageFromFooter(footer, footerAt);
    } catch (cause) {
      throw fromArrow(cause, name, (offset) => offset, footerAt);
    }
    placed = { bytes, at: footerAt, batchesAt: at, exact: false };
  } else {
    if (head === undefined) return invalid(name, at, 'no schema message');
    if (head.kind === 'end') return invalid(name, at, 'the stream ends before its schema');
    checkMessageOrder(name, head.header.headerType, at, true, layout.kind);
    return invalid(name, at, 'the stream does not start with a schema');
  }
  let schema: Schema;
  try {
    schema = decodeIpcSchema(placed.bytes);
  } catch (cause) {
    throw fromArrow(
      cause,
      name,
      (offset) => (placed.exact ? placed.at + offset : placed.at),
      placed.at,
    );
  }
  const column = options.timestampColumn;
  // stream-arrow's row mapping refuses a column by name; here it is this file's refusal.
  const inFile = <T>(run: () => T, at: number): T => {
    try {
      return run();
    } catch (cause) {
      throw fromArrow(cause, name, (offset) => offset, at);
    }
  };
  const time =
    column === undefined ? undefined : inFile(() => planTimestamp(schema, column), placed.at);
  return {
    bytesRead,
    schema: {
      bytes: placed.bytes,
      at: placed.at,
      exact: placed.exact,
      batchesAt: placed.batchesAt,
      rows: inFile(() => planRows(schema), placed.at),
      time:
        time === undefined
          ? undefined
          : (columns, at) => {
              const bound = time(columns, at);
              return (row) => inFile(() => bound(row), at);
            },
    },
  };
}
