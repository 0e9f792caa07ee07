import {
  ArrowBatchError,
  MESSAGE_PREFIX_BYTES,
  MessageHeader,
  decodeMessageHeader,
  ipcLayout,
  readMessagePrefix,
  type IpcLayout,
  type MessageInfo,
} from '@thalweg/stream-arrow';
import { FileSourceError, readFailed } from './errors.js';
import { readFully, type OpenFile } from './file-access.js';

/**
 * This source's side of Arrow IPC framing: which bytes of a file to read
 * for a message, and stream-arrow's refusals in this package's codes. The
 * framing itself (the layout, a message's prefix and header, every length
 * checked before it is read by) is stream-arrow's one IPC reader; this
 * source reads a file a message at a time through it, never holding more
 * than a message.
 */
export type { IpcLayout } from '@thalweg/stream-arrow';

/** The layout of `name` from its first 8 and last 10 bytes. */
export function layoutOf(
  name: string,
  size: number,
  head: Uint8Array,
  tail: Uint8Array,
): IpcLayout {
  return translated(name, 0, () => ipcLayout(size, head, tail));
}

/** A message's prefix and metadata (read) and its header (parsed), or the end marker. */
export type Head =
  | { readonly kind: 'end'; readonly bytesRead: number }
  | {
      readonly kind: 'message';
      readonly bytesRead: number;
      /** The prefix and the metadata, as in the file. */
      readonly metadata: Uint8Array;
      readonly header: MessageInfo;
    };

/** The message at `at`, up to its body, each length checked against the region before it is read. */
export async function readHead(
  file: OpenFile,
  name: string,
  at: number,
  regionEnd: number,
): Promise<Head> {
  const probe = new Uint8Array(Math.min(MESSAGE_PREFIX_BYTES, regionEnd - at));
  const got = await readAt(file, name, probe, at);
  if (got < probe.byteLength) changed(name, at + got);
  const prefix = translated(name, at, () => readMessagePrefix(probe, at, regionEnd - at));
  if (prefix.kind === 'end') return { kind: 'end', bytesRead: got };
  const metadata = new Uint8Array(prefix.prefixLength + prefix.metadataLength);
  const more = await readAt(file, name, metadata, at);
  if (more < metadata.byteLength) changed(name, at + more);
  const header = headerOf(name, metadata.subarray(prefix.prefixLength), at);
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

/** The header of the message at `at`, from its metadata (without the prefix). */
export function headerOf(name: string, metadata: Uint8Array, at: number): MessageInfo {
  return translated(name, at, () => decodeMessageHeader(metadata, at));
}

/**
 * The message sequence this source reads: one schema, first; then record
 * batches. A dictionary batch is refused (no column type rendered here uses
 * one), and so is a second schema, which IPC streams do not allow and
 * apache-arrow would silently switch to.
 */
export function checkMessageOrder(
  name: string,
  headerType: MessageHeader,
  at: number,
  first: boolean,
  layout: IpcLayout['kind'],
): void {
  // The file format may leave the schema to its footer.
  if (first && headerType !== MessageHeader.Schema && layout === 'stream') {
    invalid(name, at, 'the stream does not start with a schema');
  }
  if (!first && headerType === MessageHeader.Schema) {
    invalid(name, at, 'a schema message after the first message');
  }
  if (headerType === MessageHeader.DictionaryBatch) {
    throw new FileSourceError(
      'TWG_FILE_IPC_UNSUPPORTED',
      'a dictionary batch: dictionary-encoded columns are not read',
      { file: name, position: at },
    );
  }
}

/**
 * stream-arrow's refusal as this source's: the same reason, at the file
 * position `position(offset)` gives for the reader's byte offset.
 */
export function fromArrow(
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
    cause.code === 'TWG_ARROW_IPC_UNSUPPORTED' || cause.code === 'TWG_ARROW_IPC_COMPRESSED'
      ? 'TWG_FILE_IPC_UNSUPPORTED'
      : cause.code === 'TWG_ARROW_IPC_TOO_LARGE'
        ? 'TWG_FILE_RECORD_TOO_LARGE'
        : 'TWG_FILE_IPC_INVALID';
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

/** Runs a stream-arrow framing step whose offsets are file positions. */
function translated<T>(name: string, at: number, run: () => T): T {
  try {
    return run();
  } catch (cause) {
    throw fromArrow(cause, name, (offset) => offset, at);
  }
}

export async function readAt(
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

export function invalid(name: string, position: number, reason: string): never {
  throw new FileSourceError('TWG_FILE_IPC_INVALID', reason, { file: name, position });
}

export function changed(name: string, position: number): never {
  throw new FileSourceError(
    'TWG_FILE_CHANGED',
    'the file ends before the size it had when the set was opened: files must not change while read',
    { file: name, position },
  );
}
