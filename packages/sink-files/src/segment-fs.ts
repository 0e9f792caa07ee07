import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  type FileHandle,
} from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeAll } from './write-all.js';

/** A file being written: the steps of flush-close durability, one call each. */
export interface SegmentFile {
  /**
   * Writes all of `chunks`, in order, at the current end of the file. A
   * segment comes as the encoder's chunks (most of them views into the
   * packed batches), so it is never joined into one buffer first.
   */
  write(chunks: readonly Uint8Array[]): Promise<void>;
  /** fsync: the file's data and metadata are on stable storage when it resolves. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file system as the raw sink uses it: the one seam through which every
 * byte reaches the disk, so tests inject faults (a failing fsync, a rename
 * that throws, a slow disk) into a real file system without patching Node.
 * Paths are absolute.
 */
export interface SegmentFs {
  /** Creates the directory and its missing parents, each made durable in its parent. */
  ensureDir(dir: string): Promise<void>;
  /** Names of the entries of `dir`. */
  list(dir: string): Promise<string[]>;
  /**
   * The whole of `path`. With `scratch` large enough, the bytes are read into
   * it and the result is a view of it (a reader of many segments reuses two
   * buffers rather than faulting in a fresh one per file); an implementation
   * may ignore `scratch` and return new memory.
   */
  readFile(path: string, scratch?: Uint8Array): Promise<Uint8Array>;
  /** Creates `path`, failing if it exists. */
  create(path: string): Promise<SegmentFile>;
  /** Opens `path` for appending, creating it when missing; `write` appends. */
  append(path: string): Promise<SegmentFile>;
  /** Cuts `path` to `length` bytes and makes that durable. */
  truncate(path: string, length: number): Promise<void>;
  /** The size of `path` in bytes, or null when there is no such file. */
  size(path: string): Promise<number | null>;
  /** Atomically replaces `to` with `from`. */
  rename(from: string, to: string): Promise<void>;
  /** fsync of a directory: the entries created, renamed or removed in it are durable. */
  syncDir(dir: string): Promise<void>;
  /** Removes `path`; a missing file is not an error. */
  remove(path: string): Promise<void>;
}

/** The real file system, through node:fs/promises. */
export const nodeSegmentFs: SegmentFs = {
  async ensureDir(dir) {
    const first = await mkdir(dir, { recursive: true });
    if (first === undefined) return;
    // A new directory exists only once its entry in the parent is durable:
    // sync every parent from the deepest created directory up to the first.
    for (let at = dir; ; at = dirname(at)) {
      await syncDirectory(dirname(at));
      if (at === first || dirname(at) === at) break;
    }
  },
  list: (dir) => readdir(dir),
  readFile: async (path, scratch) =>
    scratch === undefined ? readFile(path) : readInto(path, scratch),
  create: async (path) => fileOf(await open(path, 'wx')),
  append: async (path) => fileOf(await open(path, 'a')),
  async truncate(path, length) {
    const handle = await open(path, 'r+');
    try {
      await handle.truncate(length);
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  async size(path) {
    try {
      return (await stat(path)).size;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return null;
      throw error;
    }
  },
  rename: (from, to) => rename(from, to),
  syncDir: syncDirectory,
  remove: (path) => rm(path, { force: true }),
};

function fileOf(handle: FileHandle): SegmentFile {
  return {
    // Every byte, or the errno of the write that failed (write-all.ts).
    write: (chunks) => writeAll(handle, chunks),
    sync: () => handle.sync(),
    close: () => handle.close(),
  };
}

/** `path` into `scratch` when it fits (one read call per chunk the kernel returns), else a new buffer. */
async function readInto(path: string, scratch: Uint8Array): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > scratch.byteLength) return await handle.readFile();
    let at = 0;
    while (at < size) {
      const { bytesRead } = await handle.read(scratch, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return scratch.subarray(0, at);
  } finally {
    await handle.close();
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
