import { open } from 'node:fs/promises';

/** What the source needs to know of a file to tell whether it changed under it. */
export interface FileStat {
  readonly size: number;
  readonly mtimeMs: number;
}

/** A file opened for positioned reads; positions are explicit, so reads never race a seek. */
export interface OpenFile {
  stat(): Promise<FileStat>;
  /** Reads up to `length` bytes at `position` into `into[offset..]`; returns how many were read. */
  read(into: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The one seam between the readers and the file system. The real adapter is
 * `node:fs/promises`; a test wraps it to make the n-th read fail and prove a
 * refused read loses nothing when `batches()` is called again.
 */
export interface FileAccess {
  open(path: string): Promise<OpenFile>;
}

export const nodeFileAccess: FileAccess = {
  async open(path: string): Promise<OpenFile> {
    const handle = await open(path, 'r');
    return {
      async stat() {
        const s = await handle.stat();
        return { size: s.size, mtimeMs: s.mtimeMs };
      },
      async read(into, offset, length, position) {
        const { bytesRead } = await handle.read(into, offset, length, position);
        return bytesRead;
      },
      close: () => handle.close(),
    };
  },
};

/** Reads exactly `length` bytes at `position`, or fewer only at the end of the file. */
export async function readFully(
  file: OpenFile,
  into: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await file.read(into, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}
