import {
  ArrowBatchError,
  IPC_FILE_TAIL,
  MessageHeader,
  decodeIpcStream,
  schemaMessageFromFooter,
} from '@thalweg/stream-arrow';
import { ipcBodyCodecs } from '@thalweg/wire-compression';
import { RecordBatchReader, type Schema } from 'apache-arrow';
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
import { planRows, planTimestamp, type RowPlan, type TimestampPlan } from './row-json.js';

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

const EOS = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

/**
 * The file's schema: its first message, or for a file-format file whose
 * writer put the schema only in the footer, a schema message built from the
 * footer (stream-arrow's `schemaMessageFromFooter`). Checked by the same
 * decode as every batch: behind it an end-of-stream marker makes a stream
 * with no batch, which `decodeIpcStream` scans and bounds-checks in full
 * before it refuses it for holding no batch; only that refusal means the
 * schema is sound. Its types are then checked against what a row renders.
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
  const probe = new Uint8Array(placed.bytes.byteLength + EOS.byteLength);
  probe.set(placed.bytes, 0);
  probe.set(EOS, placed.bytes.byteLength);
  try {
    decodeIpcStream(probe, { codecs: ipcBodyCodecs });
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
