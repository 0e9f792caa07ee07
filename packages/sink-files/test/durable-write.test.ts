import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSegmentDurably } from '../src/durable-write.js';
import { RawSinkError } from '../src/index.js';
import { anchor, batchOf, FaultyFs, openSink, recordingTarget, tempDir } from './helpers.js';

/** What node:fs throws when the device has no space left. */
function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), {
    code: 'ENOSPC',
    errno: -28,
    syscall: 'write',
  });
}

describe('writeSegmentDurably on a full disk', () => {
  it('says the disk is full, names the file, and does not retry', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    fs.fail('write', Infinity, enospc());
    const retries: number[] = [];
    const written = writeSegmentDurably(
      {
        fs,
        dir,
        retry: { maxAttempts: 5, baseDelayMs: 0, maxDelayMs: 0 },
        onRetry: (_file, attempt) => retries.push(attempt),
      },
      7,
      'seg-7.arrow',
      [new Uint8Array(16)],
    );
    const error = await written.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RawSinkError);
    const e = error as RawSinkError;
    expect(e.code).toBe('TWG_RAW_WRITE_FAILED');
    expect(e.file).toBe(join(dir, 'seg-7.arrow'));
    expect(e.message).toMatch(/the disk is full \(ENOSPC\) writing /);
    expect(e.message).toContain(dir);
    expect(e.message).not.toMatch(/after \d+ attempts/);
    // One attempt, no retry: another would only fill the disk again.
    expect(fs.calls.get('create')).toBe(1);
    expect(retries).toEqual([]);
    // The partial temp file is removed: the space goes back.
    expect(await readdir(dir)).toEqual([]);
  });

  it('still retries other write failures', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    fs.fail('write', 1, Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    const retries: number[] = [];
    await writeSegmentDurably(
      {
        fs,
        dir,
        retry: { maxAttempts: 5, baseDelayMs: 0, maxDelayMs: 0 },
        onRetry: (_file, attempt) => retries.push(attempt),
      },
      1,
      'seg-1.arrow',
      [new Uint8Array(16)],
    );
    expect(retries).toEqual([1]);
    expect(await readdir(dir)).toEqual(['seg-1.arrow']);
  });

  it('fails the sink with that message, nothing confirmed', async () => {
    const dir = await tempDir();
    const fs = new FaultyFs();
    const target = recordingTarget();
    const sink = await openSink(dir, { fs, confirm: target });
    fs.fail('write', Infinity, enospc());
    const b = batchOf('t', 0, 0, 10);
    await sink.submit(b, b.span, anchor(b));
    const error = await sink.flush().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RawSinkError);
    expect((error as RawSinkError).message).toMatch(/disk is full \(ENOSPC\)/);
    expect(target.applied).toEqual([]);
    await sink.close().catch(() => undefined);
  });
});
