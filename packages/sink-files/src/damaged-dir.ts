import { join } from 'node:path';
import type { SegmentFs } from './segment-fs.js';

/** Where raw keeps segment files it no longer lists, inside the raw directory. */
export const DAMAGED_DIR = 'damaged';

/**
 * Moves `names` (files of `dir`) into `dir/damaged/`, for a person to look
 * at: never deleted, never written over (a name already there gets a `.N`
 * suffix: a later segment can reuse a dropped one's sequence number). The
 * moves are durable when this resolves: both directories are fsynced.
 * Returns the names given inside `damaged/`, in order.
 */
export async function keepAside(
  fs: SegmentFs,
  dir: string,
  names: readonly string[],
): Promise<string[]> {
  if (names.length === 0) return [];
  const aside = join(dir, DAMAGED_DIR);
  await fs.ensureDir(aside);
  const taken = new Set(await fs.list(aside));
  const moved: string[] = [];
  for (const name of names) {
    let target = name;
    for (let n = 1; taken.has(target); n++) target = `${name}.${n}`;
    taken.add(target);
    await fs.rename(join(dir, name), join(aside, target));
    moved.push(target);
  }
  await fs.syncDir(aside);
  await fs.syncDir(dir);
  return moved;
}
