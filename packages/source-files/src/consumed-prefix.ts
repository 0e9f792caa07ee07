import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { readFailed } from './errors.js';
import type { FileEntry } from './file-set.js';

/** Bytes hashed at each end of a consumed prefix. */
const BLOCK = 4096;

/**
 * What a cursor remembers of a file it consumed: how many bytes, and an
 * identity of those bytes. On resume the file must still start with exactly
 * that prefix: a file that grew is read on from where it stopped; one whose
 * consumed bytes changed would give the stored offsets to other records.
 */
export interface ConsumedPrefix {
  readonly size: number;
  /**
   * SHA-256 (hex) of the prefix's size and of its first and last 4 KiB (the
   * whole prefix when it is shorter than 8 KiB). Not a hash of every byte: a
   * change in the middle of a large prefix that keeps both ends goes unseen;
   * a rewritten, replaced, truncated or rotated file does not.
   */
  readonly digest: string;
}

/** The identity of the first `size` bytes of `entry`, read from disk now. */
export function consumedPrefix(entry: FileEntry, size: number): ConsumedPrefix {
  const hash = createHash('sha256').update(`${size}\n`);
  if (size === 0) return { size, digest: hash.digest('hex') };
  let fd: number;
  try {
    fd = openSync(entry.path, 'r');
  } catch (cause) {
    throw readFailed(entry.name, 'open', cause);
  }
  try {
    const ranges: [number, number][] =
      size <= 2 * BLOCK
        ? [[0, size]]
        : [
            [0, BLOCK],
            [size - BLOCK, size],
          ];
    for (const [from, to] of ranges) {
      const bytes = Buffer.alloc(to - from);
      let done = 0;
      while (done < bytes.length) {
        const n = readSync(fd, bytes, done, bytes.length - done, from + done);
        if (n === 0) break;
        done += n;
      }
      hash.update(bytes.subarray(0, done));
    }
  } catch (cause) {
    throw readFailed(entry.name, `reading the first ${size} bytes`, cause);
  } finally {
    closeSync(fd);
  }
  return { size, digest: hash.digest('hex') };
}

/**
 * The prefixes a cursor records: every file before the cursor's whole, and
 * the cursor's file up to its position. A whole file's identity is taken
 * once (it was read to its end under a size and mtime check, so it is not
 * read again); the current file's is taken at each new position.
 */
export class ConsumedPrefixes {
  private readonly whole = new Map<number, ConsumedPrefix>();
  private last: { readonly fileIndex: number; readonly prefix: ConsumedPrefix } | undefined;

  constructor(private readonly files: readonly FileEntry[]) {}

  upTo(fileIndex: number, position: number): ConsumedPrefix[] {
    const out: ConsumedPrefix[] = [];
    for (let i = 0; i < fileIndex; i++) {
      let prefix = this.whole.get(i);
      if (prefix === undefined)
        this.whole.set(i, (prefix = consumedPrefix(this.entry(i), this.entry(i).size)));
      out.push(prefix);
    }
    const last = this.last;
    const prefix =
      last?.fileIndex === fileIndex && last.prefix.size === position
        ? last.prefix
        : consumedPrefix(this.entry(fileIndex), position);
    this.last = { fileIndex, prefix };
    out.push(prefix);
    return out;
  }

  private entry(i: number): FileEntry {
    const entry = this.files[i];
    if (entry === undefined) throw new Error(`file ${i} is not in the set`);
    return entry;
  }
}
