/** The two calls of a file handle `writeAll` needs; node:fs/promises' FileHandle has both. */
export interface WritableHandle {
  writev(buffers: readonly Uint8Array[]): Promise<{ readonly bytesWritten: number }>;
  write(buffer: Uint8Array, offset: number): Promise<{ readonly bytesWritten: number }>;
}

/**
 * Writes all of `chunks`, in order, at the handle's position.
 *
 * libuv's writev resumes after short writes, but when a resumed write fails
 * it returns the bytes written so far and drops the error: a full disk came
 * back as a bare "wrote 12288 of 557138 bytes". The rest is written again
 * here, so the failing write throws its own errno (ENOSPC, EDQUOT, EIO) for
 * the caller to name.
 */
export async function writeAll(
  handle: WritableHandle,
  chunks: readonly Uint8Array[],
): Promise<void> {
  let expected = 0;
  for (const chunk of chunks) expected += chunk.byteLength;
  let done = (await handle.writev(chunks)).bytesWritten;
  for (const rest of unwritten(chunks, done)) {
    for (let at = 0; at < rest.byteLength;) {
      const { bytesWritten } = await handle.write(rest, at);
      if (bytesWritten === 0) throw new Error(`wrote ${done} of ${expected} bytes`);
      at += bytesWritten;
      done += bytesWritten;
    }
  }
}

/** What of `chunks` lies beyond their first `written` bytes. */
function unwritten(chunks: readonly Uint8Array[], written: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let skip = written;
  for (const chunk of chunks) {
    if (skip >= chunk.byteLength) {
      skip -= chunk.byteLength;
      continue;
    }
    out.push(skip === 0 ? chunk : chunk.subarray(skip));
    skip = 0;
  }
  return out;
}
