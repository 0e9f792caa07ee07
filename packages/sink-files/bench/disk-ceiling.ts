import { closeSync, fsyncSync, openSync, readdirSync, statSync, writeSync } from 'node:fs';
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

/**
 * The disk's ceiling for raw: `bytes` written to one new file in `dir`
 * sequentially, 1 MiB a write, then one fsync — what `dd bs=1M conv=fsync`
 * does — in MB/s. Raw writes the same bytes as segments with their own
 * fsyncs, so its MB/s over this is how near the disk's limit it runs.
 */
export async function sequentialWriteMbPerS(dir: string, bytes: number): Promise<number> {
  const path = join(dir, 'ceiling.bin');
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  const started = performance.now();
  const fd = openSync(path, 'w');
  try {
    for (let left = bytes; left > 0; left -= chunk.length) {
      writeSync(fd, chunk, 0, Math.min(chunk.length, left));
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const seconds = (performance.now() - started) / 1000;
  await rm(path, { force: true });
  return bytes / 1e6 / seconds;
}
