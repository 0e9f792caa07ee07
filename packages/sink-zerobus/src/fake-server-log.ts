import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { ThalwegError } from '@thalweg/connector-core';

/**
 * Where a durable fake server puts what it acknowledges: `append` resolves
 * only once the payloads are on stable storage. The seam tests replace to
 * hold an append open and see that nothing is acknowledged before it ends.
 */
export interface FakeServerLog {
  append(payloads: readonly Uint8Array[]): Promise<void>;
  close(): Promise<void>;
}

/** The file a durable fake server appends to: one per server instance, never reopened. */
const LOG_FILE = /^fake-zerobus-[0-9a-z-]+\.log$/;
/** Starts every log file: a file without it is not a fake server log. */
const LOG_MAGIC = Buffer.from('TWGFZB01', 'ascii');
/** Per record: payload length (u32 BE), then the CRC-32 of the payload (u32 BE). */
const RECORD_HEADER = 8;

export type FakeServerLogErrorCode = 'TWG_ZEROBUS_FAKE_LOG_CORRUPT';

/** A durable fake server's log holds bytes no append wrote: names the file and the byte offset. */
export class FakeServerLogError extends ThalwegError<FakeServerLogErrorCode> {
  constructor(
    readonly file: string,
    readonly offset: number,
    reason: string,
  ) {
    super({
      code: 'TWG_ZEROBUS_FAKE_LOG_CORRUPT',
      errorClass: 'fatal-config',
      message: `${file} at byte ${offset}: ${reason}`,
    });
  }
}

/** The part of a file handle the log uses: the seam to observe write-then-sync ordering. */
export interface LogFileHandle {
  write(buffer: Uint8Array): Promise<unknown>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export type LogFileOpener = (path: string) => Promise<LogFileHandle>;

const appendOnly: LogFileOpener = (path) => open(path, 'a');

/**
 * Length-prefixed, checksummed payloads in a file of its own (a new name
 * per instance: a later process never appends after a torn tail), written
 * then fsync'd before `append` resolves.
 */
export class FileServerLog implements FakeServerLog {
  readonly file: string;
  private handle: Promise<LogFileHandle> | null = null;
  private written = false;

  constructor(
    readonly dir: string,
    private readonly openFile: LogFileOpener = appendOnly,
  ) {
    const unique = `${Date.now().toString(36)}-${process.pid.toString(36)}-${randomBytes(4).toString('hex')}`;
    this.file = join(dir, `fake-zerobus-${unique}.log`);
  }

  async append(payloads: readonly Uint8Array[]): Promise<void> {
    if (payloads.length === 0) return;
    this.handle ??= mkdir(this.dir, { recursive: true }).then(() => this.openFile(this.file));
    const handle = await this.handle;
    const parts: Uint8Array[] = this.written ? [] : [LOG_MAGIC];
    for (const payload of payloads) {
      const header = Buffer.alloc(RECORD_HEADER);
      header.writeUInt32BE(payload.byteLength, 0);
      header.writeUInt32BE(crc32(payload), 4);
      parts.push(header, payload);
    }
    await handle.write(Buffer.concat(parts));
    this.written = true;
    await handle.sync();
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle !== null) await (await handle).close();
  }
}

/**
 * Every batch payload a durable fake server acknowledged, file by file in
 * the order they were created and in append order within each. A partial
 * record at the end of a file is ignored: the server died while writing it,
 * before its fsync, so it was never acknowledged. Anything else that does not
 * parse is a FakeServerLogError naming the file and offset. A directory that
 * does not exist holds nothing (no batch was ever acknowledged).
 */
export async function readFakeServerBatches(dir: string): Promise<Uint8Array[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
  const out: Uint8Array[] = [];
  for (const name of names.filter((n) => LOG_FILE.test(n)).sort(byCreation)) {
    const file = join(dir, name);
    out.push(...parseServerLog(file, await readFile(file)));
  }
  return out;
}

/** The payloads of one log file's bytes (see readFakeServerBatches). */
export function parseServerLog(file: string, bytes: Uint8Array): Uint8Array[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.byteLength < LOG_MAGIC.byteLength) {
    // A torn first append: only a prefix of the magic can have reached the file.
    if (LOG_MAGIC.subarray(0, buf.byteLength).equals(buf)) return [];
    throw new FakeServerLogError(file, 0, 'not a fake server log (bad magic)');
  }
  if (!buf.subarray(0, LOG_MAGIC.byteLength).equals(LOG_MAGIC)) {
    throw new FakeServerLogError(file, 0, 'not a fake server log (bad magic)');
  }
  const out: Uint8Array[] = [];
  let at = LOG_MAGIC.byteLength;
  while (at < buf.byteLength) {
    if (buf.byteLength - at < RECORD_HEADER) break;
    const length = buf.readUInt32BE(at);
    const sum = buf.readUInt32BE(at + 4);
    if (length === 0) throw new FakeServerLogError(file, at, 'a record of length 0');
    const end = at + RECORD_HEADER + length;
    if (end > buf.byteLength) break;
    const payload = buf.subarray(at + RECORD_HEADER, end);
    if (crc32(payload) !== sum) {
      throw new FakeServerLogError(file, at, `checksum mismatch in a record of ${length} bytes`);
    }
    out.push(new Uint8Array(payload));
    at = end;
  }
  return out;
}

/** File names start with the creation time in base 36: compare numerically, then by name. */
function byCreation(a: string, b: string): number {
  const time = (n: string): number =>
    parseInt(n.slice('fake-zerobus-'.length).split('-')[0] ?? '', 36);
  return time(a) - time(b) || (a < b ? -1 : a > b ? 1 : 0);
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}
