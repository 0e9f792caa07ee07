import { ArrowBatchError } from './errors.js';

/**
 * Where the messages of Arrow IPC bytes are. Stream format: messages from
 * byte 0. File format: `ARROW1` and padding to byte 8, the same messages, a
 * footer (File.fbs) indexing them, its i32 length, `ARROW1`. Decided from
 * the first 8 and the last 10 bytes alone, so that a reader of a file on
 * disk knows the layout before it reads any message.
 */
export const IPC_FILE_HEAD = 8;
export const IPC_FILE_TAIL = 10;
const MAGIC = 'ARROW1';

export interface IpcLayout {
  readonly kind: 'stream' | 'file';
  /** Where the first message starts. */
  readonly regionStart: number;
  /** Where the messages end: the size, or where the file format's footer begins. */
  readonly regionEnd: number;
}

/** The layout of `size` bytes from their first `min(8, size)` and last `min(10, size)` bytes. */
export function ipcLayout(size: number, head: Uint8Array, tail: Uint8Array): IpcLayout {
  if (!hasMagic(head, 0)) return { kind: 'stream', regionStart: 0, regionEnd: size };
  if (size < IPC_FILE_HEAD + IPC_FILE_TAIL || !hasMagic(tail, IPC_FILE_TAIL - MAGIC.length)) {
    fail(
      Math.max(0, size - MAGIC.length),
      'an Arrow IPC file without its trailing ARROW1: truncated',
    );
  }
  const footerLength = new DataView(tail.buffer, tail.byteOffset, tail.byteLength).getInt32(
    0,
    true,
  );
  const footerAt = size - IPC_FILE_TAIL - footerLength;
  if (footerLength <= 0 || footerAt < IPC_FILE_HEAD) {
    fail(size - IPC_FILE_TAIL, `footer length ${footerLength} does not fit the file`);
  }
  return { kind: 'file', regionStart: IPC_FILE_HEAD, regionEnd: footerAt };
}

function hasMagic(bytes: Uint8Array, at: number): boolean {
  if (bytes.byteLength < at + MAGIC.length) return false;
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[at + i] !== MAGIC.charCodeAt(i)) return false;
  }
  return true;
}

function fail(offset: number, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_IPC_INVALID', reason, { offset });
}
