import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Who has a LevelDB local tier open. The exclusion itself is LevelDB's (its
 * LOCK file is a kernel lock: a second open, in this process or another, is
 * refused, and a killed holder's lock goes with its process, so a SIGKILL
 * never needs cleanup). LevelDB's refusal does not say who holds it, so the
 * holder writes `holder.json` once it has the lock, and a refused opener
 * reads it to name the holder. Informational only: a stale file is
 * overwritten by the next holder and never read while nobody holds the lock.
 */
const HOLDER_FILE = 'holder.json';

export async function recordHolder(location: string): Promise<void> {
  const holder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  await writeFile(join(location, HOLDER_FILE), `${JSON.stringify(holder)}\n`);
}

/** `pid N on host H (this process), since T`, or null when nobody is recorded. */
export async function describeHolder(location: string): Promise<string | null> {
  try {
    const h = JSON.parse(await readFile(join(location, HOLDER_FILE), 'utf8')) as {
      pid?: unknown;
      host?: unknown;
      since?: unknown;
    };
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return null;
    const self = h.pid === process.pid && h.host === hostname() ? ' (this process)' : '';
    return `pid ${h.pid} on host ${h.host}${self}, since ${String(h.since)}`;
  } catch {
    return null;
  }
}
