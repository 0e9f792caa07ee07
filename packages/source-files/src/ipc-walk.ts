import { closeSync, openSync, readSync } from 'node:fs';
import { MESSAGE_PREFIX_BYTES, MessageHeader, readMessagePrefix } from '@thalweg/stream-arrow';
import { readFailed } from './errors.js';
import { checkMessageOrder, fromArrow, headerOf, invalid, layoutOf } from './ipc-messages.js';

/** A record batch message and the rows of the file before it. */
export interface BatchPlace {
  readonly at: number;
  readonly rows: number;
  readonly rowsBefore: number;
}

export interface IpcOutline {
  readonly batches: readonly BatchPlace[];
  readonly rows: number;
  /** Positions that mean "the end of this file": the end marker, the end of the messages, the size. */
  readonly ends: readonly number[];
}

/**
 * The batches of an Arrow IPC file from the message headers alone, reading
 * no body: how `seek` counts the rows before a cursor and checks that its
 * position is a batch message. Synchronous because `Source.seek` is; it runs
 * once, before the first batch, and reads a few hundred bytes per batch.
 */
export function outlineIpcFile(path: string, name: string, size: number): IpcOutline {
  if (size === 0) return { batches: [], rows: 0, ends: [0] };
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw readFailed(name, 'open', cause);
  }
  try {
    const read = (length: number, position: number): Uint8Array => {
      const into = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        let n: number;
        try {
          n = readSync(fd, into, done, length - done, position + done);
        } catch (cause) {
          throw readFailed(name, `reading ${length} bytes at ${position}`, cause);
        }
        if (n === 0) invalid(name, position + done, 'the file ends early');
        done += n;
      }
      return into;
    };
    const layout = layoutOf(
      name,
      size,
      read(Math.min(8, size), 0),
      read(Math.min(10, size), size - Math.min(10, size)),
    );
    const batches: BatchPlace[] = [];
    const ends = [layout.regionEnd, size];
    let rows = 0;
    let at = layout.regionStart;
    for (let first = true; at < layout.regionEnd; first = false) {
      const probe = read(Math.min(MESSAGE_PREFIX_BYTES, layout.regionEnd - at), at);
      let prefix: ReturnType<typeof readMessagePrefix>;
      try {
        prefix = readMessagePrefix(probe, at, layout.regionEnd - at);
      } catch (cause) {
        throw fromArrow(cause, name, (offset) => offset, at);
      }
      if (prefix.kind === 'end') {
        if (first && layout.kind === 'stream')
          invalid(name, at, 'the stream ends before its schema');
        ends.push(at);
        break;
      }
      const header = headerOf(name, read(prefix.metadataLength, at + prefix.prefixLength), at);
      checkMessageOrder(name, header.headerType, at, first, layout.kind);
      const end = at + prefix.prefixLength + prefix.metadataLength + header.bodyLength;
      if (end > layout.regionEnd)
        invalid(name, at, `body of ${header.bodyLength} bytes does not fit the file`);
      if (header.headerType === MessageHeader.RecordBatch) {
        batches.push({ at, rows: header.rows, rowsBefore: rows });
        rows += header.rows;
      }
      at = end;
    }
    if (at === layout.regionStart && layout.kind === 'stream')
      invalid(name, at, 'no schema message');
    return { batches, rows, ends };
  } finally {
    closeSync(fd);
  }
}
