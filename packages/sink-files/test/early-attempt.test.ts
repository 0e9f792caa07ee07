import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSegmentDurably, type DurableWriteDeps } from '../src/durable-write.js';
import { EarlyAttempt } from '../src/early-attempt.js';
import { FaultyFs, tempDir } from './helpers.js';

/** A segment of `n` chunks of 1 KiB, chunk i filled with i. */
const chunksOf = (n: number) =>
  Array.from({ length: n }, (_, i) => new Uint8Array(1024).fill(i % 256));

function deps(fs: FaultyFs, dir: string, retries: number[] = []): DurableWriteDeps {
  return {
    fs,
    dir,
    retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
    onRetry: (_file, attempt) => retries.push(attempt),
  };
}

describe('a segment written while it is encoded (early-attempt.ts)', () => {
  it('writes each slice once, in order, and the commit writes only what is missing', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const segment = chunksOf(10);
    const early = await EarlyAttempt.begin(fs, dir, 3);
    // The encoder's chunks array as it grows: 4 chunks, the same 4 again, then 7.
    await early.write(segment.slice(0, 4));
    await early.write(segment.slice(0, 4));
    await early.write(segment.slice(0, 7));
    await writeSegmentDurably(deps(fs, dir), 3, 'seg-3.arrow', segment, early);
    expect(await readdir(dir)).toEqual(['seg-3.arrow']);
    expect(
      Buffer.from(await readFile(join(dir, 'seg-3.arrow'))).equals(Buffer.concat(segment)),
    ).toBe(true);
    // One file created; three writes: two slices and the rest at the commit.
    expect(fs.log.filter((l) => l.includes('0000000000000003') || l.includes('seg-3'))).toEqual([
      'create .seg-0000000000000003.1.tmp',
      'write .seg-0000000000000003.1.tmp',
      'write .seg-0000000000000003.1.tmp',
      'write .seg-0000000000000003.1.tmp',
      'sync .seg-0000000000000003.1.tmp',
      'close .seg-0000000000000003.1.tmp',
      'rename .seg-0000000000000003.1.tmp -> seg-3.arrow',
    ]);
  });

  it('holds a failed slice write, and the commit retries the whole segment under the next temp name', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const segment = chunksOf(6);
    const early = await EarlyAttempt.begin(fs, dir, 0);
    fs.fail('write', 1, Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    await early.write(segment.slice(0, 3));
    // After the failure nothing more is written to attempt 1's file.
    await early.write(segment.slice(0, 5));
    const retries: number[] = [];
    await writeSegmentDurably(deps(fs, dir, retries), 0, 'seg-0.arrow', segment, early);
    expect(retries).toEqual([1]);
    expect(await readdir(dir)).toEqual(['seg-0.arrow']);
    expect(
      Buffer.from(await readFile(join(dir, 'seg-0.arrow'))).equals(Buffer.concat(segment)),
    ).toBe(true);
    expect(fs.log.filter((l) => l.includes('.1.tmp'))).toEqual([
      'create .seg-0000000000000000.1.tmp',
      'write .seg-0000000000000000.1.tmp',
      'failed write .seg-0000000000000000.1.tmp',
      'close .seg-0000000000000000.1.tmp',
      'remove .seg-0000000000000000.1.tmp',
    ]);
  });

  it('holds a failed create; the commit reports it as attempt 1 and retries', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    fs.fail('create', 1);
    const segment = chunksOf(2);
    const early = await EarlyAttempt.begin(fs, dir, 5);
    await early.write(segment);
    const retries: number[] = [];
    await writeSegmentDurably(deps(fs, dir, retries), 5, 'seg-5.arrow', segment, early);
    expect(retries).toEqual([1]);
    expect(await readdir(dir)).toEqual(['seg-5.arrow']);
    expect(fs.calls.get('create')).toBe(2);
  });

  it('abandoned (its encode failed), it closes and removes its temp file', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const early = await EarlyAttempt.begin(fs, dir, 9);
    await early.write(chunksOf(3));
    expect(await readdir(dir)).toEqual(['.seg-0000000000000009.1.tmp']);
    await early.abandon();
    expect(await readdir(dir)).toEqual([]);
    expect(() => early.take()).toThrow(/already taken, or abandoned/);
  });
});
