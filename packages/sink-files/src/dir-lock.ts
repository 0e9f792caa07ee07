import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RawSinkError, reasonOf } from './errors.js';
import { tryExclusiveLock } from './kernel-lock.js';

/** The lock file of a raw directory. */
export const LOCK_FILE = 'writer.lock';

/** Who holds a directory, as the holder wrote it into the lock file: for the refusal's message. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** Unique per acquisition. */
  readonly token: string;
  readonly since: string;
}

/**
 * One live writer per raw directory (ADR 0014). The lock is the kernel's:
 * `writer.lock` is opened (created if missing, never truncated before it is
 * locked) and locked exclusively without waiting (kernel-lock.ts). The
 * kernel decides, atomically, and lets go when the holder closes it or dies
 * (SIGKILL, power loss): there is no stale lock to judge or break, and any
 * number of openers racing, in one process or many, leave exactly one
 * holder. The holder then writes its pid, host and start into the file, so
 * a refused opener can name it.
 *
 * The file is never deleted: unlinking a locked file would let the next
 * opener lock a new file while a slower one still locks the old inode.
 * Shared file systems keep this guarantee only where they pass locks on
 * (NFSv4 does; said in README).
 */
export class DirLock {
  private released = false;

  private constructor(
    private readonly handle: FileHandle,
    readonly holder: LockHolder,
  ) {}

  static async acquire(dir: string, what: string): Promise<DirLock> {
    const path = join(dir, LOCK_FILE);
    const me: LockHolder = {
      pid: process.pid,
      host: hostname(),
      token: randomBytes(8).toString('hex'),
      since: new Date().toISOString(),
    };
    const handle = await open(path, constants.O_RDWR | constants.O_CREAT);
    try {
      if (!tryExclusiveLock(handle.fd)) throw locked(dir, what, await holderOf(path));
      const text = Buffer.from(`${JSON.stringify(me)}\n`);
      await handle.truncate(0);
      await handle.write(text, 0, text.byteLength, 0);
      return new DirLock(handle, me);
    } catch (error) {
      await handle.close();
      if (error instanceof RawSinkError) throw error;
      throw new RawSinkError(
        'TWG_RAW_WRITE_FAILED',
        `could not take the lock ${path}: ${reasonOf(error)}`,
        { file: path },
        error,
      );
    }
  }

  /** Lets the lock go (closes the locked descriptor). Idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    // Best effort: whatever close says, the descriptor is gone and the kernel lets go.
    await this.handle.close().catch(() => undefined);
  }
}

function locked(dir: string, what: string, held: LockHolder | null): RawSinkError {
  const self = held !== null && held.pid === process.pid && held.host === hostname();
  const who =
    held === null
      ? 'an opener that has not written its name yet'
      : `pid ${held.pid} on host ${held.host}${self ? ' (this process)' : ''}, since ${held.since}`;
  return new RawSinkError(
    'TWG_RAW_DIR_LOCKED',
    `${dir} has a live ${what} already: ${who}. One writer per directory: stop that one ` +
      `first (${join(dir, LOCK_FILE)} names it; the kernel lets a holder that is gone, even by ` +
      'SIGKILL, go at once, so nothing needs cleaning up)',
  );
}

/**
 * The holder named in the lock file. A holder writes its name just after the
 * kernel grants it the lock, so a refused opener may read the file before
 * that: it reads again a few times (at most ~100 ms) before saying so.
 */
async function holderOf(path: string): Promise<LockHolder | null> {
  for (let attempt = 0; ; attempt++) {
    const held = parseHolder(await readFile(path));
    if (held !== null || attempt === 20) return held;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The holder a lock file names; null when it does not parse. */
function parseHolder(bytes: Buffer): LockHolder | null {
  try {
    const h = JSON.parse(bytes.toString('utf8')) as Partial<LockHolder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string' || typeof h.token !== 'string') {
      return null;
    }
    return { pid: h.pid, host: h.host, token: h.token, since: String(h.since) };
  } catch {
    return null;
  }
}
