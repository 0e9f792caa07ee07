import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RawSinkError } from './errors.js';

/** The lock file of a raw directory. */
export const LOCK_FILE = 'writer.lock';

/** Who holds a directory: enough to tell, after a crash, whether that process still runs. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** Linux: the process's start time in clock ticks since boot (/proc/PID/stat field 22). */
  readonly start: string | null;
  /** Linux: the boot the process ran in (/proc/sys/kernel/random/boot_id). */
  readonly boot: string | null;
  /** Unique per acquisition: what a release or a stale-lock takeover compares. */
  readonly token: string;
  readonly since: string;
}

/**
 * One live writer per raw directory (ADR 0014). Node has no flock, so the
 * lock is a file naming its holder, created atomically with its content
 * (written to a private temp file, then hard-linked into place: link fails
 * if the lock exists, and a reader never sees it half-written).
 *
 * A lock whose holder is gone is stale and is taken over without anyone
 * cleaning up, which is what a SIGKILL or a power loss leaves: the holder is
 * gone when its pid does not run, or runs but started at another time (the
 * pid was reused), or the machine has booted since. A holder on another
 * host cannot be checked from here; it is refused like a live one, naming
 * the host (raw on a shared file system needs its operator then).
 *
 * Takeover renames the stale file aside and checks that what it moved is
 * byte for byte the lock it judged stale (an unreadable one included), and
 * gives back anything else, so two openers breaking the same stale lock at
 * once cannot both win: the loser finds a live holder. Without a kernel
 * lock (flock) there remains a narrower race, said plainly in ADR 0014: a
 * third opener that creates the lock while a second gives back the first's
 * can leave two holders.
 */
export class DirLock {
  private released = false;

  private constructor(
    private readonly path: string,
    readonly holder: LockHolder,
  ) {}

  static async acquire(dir: string, what: string): Promise<DirLock> {
    const path = join(dir, LOCK_FILE);
    const me: LockHolder = {
      pid: process.pid,
      host: hostname(),
      start: processStart(process.pid),
      boot: bootId(),
      token: randomBytes(8).toString('hex'),
      since: new Date().toISOString(),
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await createExclusive(path, me)) return new DirLock(path, me);
      const judged = await readBytes(path);
      if (judged === undefined) continue; // released meanwhile: try again
      const held = parseHolder(judged);
      if (held !== null && !isStale(held)) throw locked(dir, what, held);
      // Stale (or unreadable: a lock is never half-written by us, so one that
      // does not parse is what a power loss left, and not anyone's to keep).
      const aside = `${path}.stale-${me.token}`;
      try {
        await rename(path, aside);
      } catch (error) {
        if (isCode(error, 'ENOENT')) continue;
        throw error;
      }
      // What was moved must be the very bytes judged stale: an unreadable
      // lock compares too, so a live lock that replaced it is never removed.
      const moved = await readBytes(aside);
      if (moved === undefined || !moved.equals(judged)) {
        // Someone else took it over between our read and our rename: give it back.
        await link(aside, path).catch(() => undefined);
        await unlink(aside).catch(() => undefined);
        const now = await readHolder(path);
        if (now !== null && now !== undefined) throw locked(dir, what, now);
        continue;
      }
      await unlink(aside).catch(() => undefined);
    }
    throw new RawSinkError(
      'TWG_RAW_DIR_LOCKED',
      `could not take the lock ${path} after 5 attempts: other openers keep racing for it`,
    );
  }

  /** Removes the lock if it is still this holder's. Idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    try {
      const held = await readHolder(this.path);
      if (held?.token === this.holder.token) await unlink(this.path);
    } catch {
      // Best effort (the directory may be gone): a lock left behind is stale once this process is.
    }
  }
}

function locked(dir: string, what: string, held: LockHolder): RawSinkError {
  const self = held.pid === process.pid && held.host === hostname();
  return new RawSinkError(
    'TWG_RAW_DIR_LOCKED',
    `${dir} has a live ${what} already: pid ${held.pid} on host ${held.host}` +
      `${self ? ' (this process)' : ''}, since ${held.since}. One writer per directory: ` +
      `stop that one first (${join(dir, LOCK_FILE)} names it; a holder that is gone, even by ` +
      'SIGKILL, is taken over by the next open)',
  );
}

async function createExclusive(path: string, me: LockHolder): Promise<boolean> {
  const temp = `${path}.${me.token}.tmp`;
  await writeFile(temp, `${JSON.stringify(me)}\n`, { flag: 'wx' });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if (isCode(error, 'EEXIST')) return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** The bytes of `path`; undefined when there is no such file. */
async function readBytes(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/** The holder named in `path`; undefined when there is no such file, null when it does not parse. */
async function readHolder(path: string): Promise<LockHolder | null | undefined> {
  const bytes = await readBytes(path);
  return bytes === undefined ? undefined : parseHolder(bytes);
}

/** The holder a lock file names; null when it does not parse. */
function parseHolder(bytes: Buffer): LockHolder | null {
  try {
    const h = JSON.parse(bytes.toString('utf8')) as Partial<LockHolder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string' || typeof h.token !== 'string') {
      return null;
    }
    return {
      pid: h.pid,
      host: h.host,
      start: h.start ?? null,
      boot: h.boot ?? null,
      token: h.token,
      since: String(h.since),
    };
  } catch {
    return null;
  }
}

/** Whether the holder is certainly gone. */
function isStale(held: LockHolder): boolean {
  if (held.host !== hostname()) return false;
  const boot = bootId();
  if (held.boot !== null && boot !== null && held.boot !== boot) return true;
  try {
    process.kill(held.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    if (isCode(error, 'ESRCH')) return true;
  }
  const start = processStart(held.pid);
  return held.start !== null && start !== null && start !== held.start;
}

/** Field 22 of /proc/PID/stat (after the parenthesised command name, which may hold spaces). */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}
