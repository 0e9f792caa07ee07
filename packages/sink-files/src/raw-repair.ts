import { basename, join } from 'node:path';
import type { OffsetSpan } from '@thalweg/connector-core';
import { DAMAGED_DIR, keepAside } from './damaged-dir.js';
import { DirLock } from './dir-lock.js';
import { RawSinkError } from './errors.js';
import { MANIFEST_FILE, manifestHeader, manifestLine, parseManifest } from './raw-manifest.js';
import { checkRaw, type RawCheck } from './raw-verify.js';
import { nodeSegmentFs } from './segment-fs.js';
import { segmentSequence } from './segment-name.js';

export interface RawRepair {
  /** What was found, before the repair. */
  readonly check: RawCheck;
  /** Segment files moved to `damaged/` (present but failing a check), as named there. */
  readonly movedAside: readonly string[];
  /** The offset ranges raw no longer claims: re-read them from the source. */
  readonly dropped: readonly OffsetSpan[];
}

export { DAMAGED_DIR };

/**
 * The operator's way out of a hole (README "When raw has a hole"): with the
 * directory locked (no writer may run), every segment is verified; each
 * damaged or missing one is dropped from the manifest (rewritten whole:
 * temp, fsync, rename, directory fsync) and a damaged file is moved to
 * `damaged/` for a person to look at, never deleted. Raw then opens again,
 * claiming only what it soundly holds; the dropped ranges are what the
 * source must deliver again (rewind its position to the first of them).
 */
export async function repairRaw(dir: string): Promise<RawRepair> {
  const lock = await DirLock.acquire(dir, 'raw writer (repair)');
  try {
    const check = await checkRaw(dir, { checksums: true });
    const manifestPath = join(dir, MANIFEST_FILE);
    const parsed = parseManifest(await nodeSegmentFs.readFile(manifestPath), manifestPath);
    const bad = new Set(check.damage.map((d) => basename(d.file)));
    if (bad.has(MANIFEST_FILE)) {
      throw new RawSinkError(
        'TWG_RAW_MANIFEST_CORRUPT',
        `the manifest of ${dir} itself is damaged; repair cannot tell what raw held`,
      );
    }
    const keep = parsed.entries.filter((e) => !bad.has(e.file));
    const dropped = parsed.entries.filter((e) => bad.has(e.file));
    if (dropped.length === 0) return { check, movedAside: [], dropped: [] };
    const present: string[] = [];
    for (const e of dropped) {
      if ((await nodeSegmentFs.size(join(dir, e.file))) !== null) present.push(e.file);
    }
    if (parsed.torn === 'whole-line') {
      // The rewritten manifest no longer ends torn, so the sink's open would
      // delete the segments past it: kept aside as the open keeps them.
      const last = parsed.entries.at(-1)?.sequence ?? -1;
      for (const name of (await nodeSegmentFs.list(dir)).sort()) {
        if ((segmentSequence(name) ?? -1) > last) present.push(name);
      }
    }
    const movedAside = await keepAside(nodeSegmentFs, dir, present);
    const temp = join(dir, `.${MANIFEST_FILE}.repair.tmp`);
    await nodeSegmentFs.remove(temp);
    const file = await nodeSegmentFs.create(temp);
    try {
      await file.write([manifestHeader(parsed.cluster), ...keep.map(manifestLine)]);
      await file.sync();
    } finally {
      await file.close();
    }
    await nodeSegmentFs.rename(temp, manifestPath);
    await nodeSegmentFs.syncDir(dir);
    return { check, movedAside, dropped: dropped.flatMap((e) => e.batches.map((b) => b.span)) };
  } finally {
    await lock.release();
  }
}
