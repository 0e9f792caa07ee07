import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of every file under `dir` (a raw directory after its sink closed). */
export function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/** What the ceilings write: 1 MiB of filler, written as often as it takes. */
const FILLER = Buffer.alloc(1024 * 1024, 0x5a);

/** Writes `bytes` of filler to `fd`, 1 MiB a write, as `dd bs=1M` does. */
function writeFiller(fd: number, bytes: number): void {
  for (let left = bytes; left > 0; left -= FILLER.length) {
    writeSync(fd, FILLER, 0, Math.min(FILLER.length, left));
  }
}

/**
 * The disk's ceiling for raw: `bytes` written to one new file in `dir`
 * sequentially, 1 MiB a write, then one fsync — what `dd bs=1M conv=fsync`
 * does — in MB/s. Raw writes the same bytes as segments with their own
 * fsyncs, so its MB/s over this is how near the disk's limit it runs.
 */
export async function sequentialWriteMbPerS(dir: string, bytes: number): Promise<number> {
  const path = join(dir, 'ceiling.bin');
  const started = performance.now();
  const fd = openSync(path, 'w');
  try {
    writeFiller(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const seconds = (performance.now() - started) / 1000;
  await rm(path, { force: true });
  return bytes / 1e6 / seconds;
}

/**
 * The disk's ceiling for raw's commit protocol: the same `bytes` as
 * `segments` files of equal size, one after the other, each as raw commits
 * a segment (durable-write.ts, segment-commit.ts): a temp file written 1 MiB
 * a write, fsynced, closed, renamed into place, the directory fsynced, then
 * a line appended to a manifest and fsynced. No encoding and nothing
 * overlapped: what the protocol's three fsyncs a segment cost on this disk
 * beside `sequentialWriteMbPerS`'s one, at the segment count the run made.
 */
export async function segmentedWriteMbPerS(
  dir: string,
  bytes: number,
  segments: number,
): Promise<number> {
  const ceiling = join(dir, 'ceiling');
  mkdirSync(ceiling);
  const each = Math.ceil(bytes / Math.max(1, segments));
  const started = performance.now();
  const manifest = openSync(join(ceiling, 'manifest'), 'a');
  try {
    for (let i = 0, left = bytes; left > 0; i++, left -= each) {
      const temp = join(ceiling, `segment-${String(i)}.tmp`);
      const fd = openSync(temp, 'w');
      try {
        writeFiller(fd, Math.min(each, left));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, join(ceiling, `segment-${String(i)}.arrow`));
      const dirFd = openSync(ceiling, 'r');
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
      writeSync(manifest, `{"sequence":${String(i)},"bytes":${String(each)}}\n`);
      fsyncSync(manifest);
    }
  } finally {
    closeSync(manifest);
  }
  const seconds = (performance.now() - started) / 1000;
  await rm(ceiling, { recursive: true, force: true });
  return bytes / 1e6 / seconds;
}
