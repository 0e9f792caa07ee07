import { join } from 'node:path';
import type { OffsetSpan } from '@thalweg/connector-core';
import { DAMAGED_DIR, keepAside } from './damaged-dir.js';
import { RawSinkError, describeSpans } from './errors.js';
import type { ResolvedOptions } from './options.js';
import {
  MANIFEST_FILE,
  manifestHeader,
  parseManifest,
  type ManifestEntry,
  type TornLine,
} from './raw-manifest.js';
import type { SegmentFs } from './segment-fs.js';
import { SegmentIndex } from './segment-index.js';
import { isTempName, segmentSequence } from './segment-name.js';

/** What a raw directory holds, from its manifest, checked against the files present. */
export interface RawInventory {
  readonly cluster: string;
  /** Listed and present at the size written, in sequence order. */
  readonly entries: readonly ManifestEntry[];
  /** Listed but missing or shorter than written: what raw acknowledged and no longer holds. */
  readonly missing: readonly { readonly file: string; readonly spans: readonly OffsetSpan[] }[];
  /** Segment files the manifest does not list, with a sequence past its last entry. */
  readonly unlisted: readonly string[];
  /** Segment files the manifest does not list, with a sequence inside it: not this writer's. */
  readonly strangers: readonly string[];
  readonly temps: readonly string[];
  /** Bytes of the manifest that are whole lines; `torn` when a crash left a torn last one. */
  readonly sound: number;
  readonly torn: TornLine;
  readonly nextSequence: number;
}

/**
 * Reads a raw directory's manifest and checks it against the files there:
 * O(segments) (a size per listed file), never the segments' bytes (ADR
 * 0014). Changes nothing: the sink's open and `thalweg coverage` / `raw
 * verify` share it. Null when the directory has no manifest.
 */
export async function inventory(fs: SegmentFs, dir: string): Promise<RawInventory | null> {
  const names = (await fs.list(dir)).sort();
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!names.includes(MANIFEST_FILE)) return null;
  const parsed = parseManifest(await fs.readFile(manifestPath), manifestPath);
  const listed = new Set<string>();
  const entries: ManifestEntry[] = [];
  const missing: { file: string; spans: OffsetSpan[] }[] = [];
  let last = -1;
  for (const entry of parsed.entries) {
    if (
      entry.sequence <= last ||
      listed.has(entry.file) ||
      segmentSequence(entry.file) !== entry.sequence
    ) {
      throw new RawSinkError(
        'TWG_RAW_MANIFEST_CORRUPT',
        `manifest ${manifestPath} lists ${entry.file} (sequence ${entry.sequence}) out of order`,
      );
    }
    last = entry.sequence;
    listed.add(entry.file);
    const size = await fs.size(join(dir, entry.file));
    if (size === entry.layout.bytes) entries.push(entry);
    else missing.push({ file: entry.file, spans: entry.batches.map((b) => b.span) });
  }
  const unlisted: string[] = [];
  const strangers: string[] = [];
  for (const name of names) {
    const sequence = segmentSequence(name);
    if (sequence === null || listed.has(name)) continue;
    (sequence > last ? unlisted : strangers).push(name);
  }
  return {
    cluster: parsed.cluster,
    entries,
    missing,
    unlisted,
    strangers,
    temps: names.filter(isTempName),
    sound: parsed.sound,
    torn: parsed.torn,
    nextSequence: last + 1,
  };
}

/**
 * Open-time scan of the sink's directory, from its manifest (raw-manifest.ts)
 * rather than the segments' contents, so open costs O(segments). Refused,
 * naming what is wrong, rather than written over: a segment the manifest
 * lists that is missing or truncated (TWG_RAW_SEGMENT_MISSING, with the
 * offset ranges it held: re-read them from the source, see README), a
 * segment file it does not know inside its sequence, another cluster's
 * manifest, segments with no manifest. Then the crash leftovers, none of
 * which was ever confirmed, are removed: temp files, a torn last manifest
 * line, and segments renamed into place whose manifest line never became
 * durable. A new directory gets its manifest header first, made durable.
 */
export async function scanSegments(
  o: ResolvedOptions,
): Promise<{ index: SegmentIndex; nextSequence: number }> {
  await o.fs.ensureDir(o.dir);
  const manifestPath = join(o.dir, MANIFEST_FILE);
  const found = await inventory(o.fs, o.dir);
  if (found === null) {
    const segments = (await o.fs.list(o.dir)).filter((n) => segmentSequence(n) !== null);
    if (segments.length > 0) {
      throw new RawSinkError(
        'TWG_RAW_MANIFEST_CORRUPT',
        `${o.dir} holds ${segments.length} segments (${segments[0]}, …) but no ${MANIFEST_FILE}: ` +
          'it was deleted, or the directory was written by a release before the manifest; raw ' +
          'cannot prove what it holds',
      );
    }
    await removeTemps(o.fs, o.dir, (await o.fs.list(o.dir)).filter(isTempName));
    await createManifest(o.fs, o.dir, o.cluster);
    return { index: new SegmentIndex(), nextSequence: 0 };
  }
  if (found.cluster !== o.cluster) {
    throw new RawSinkError(
      'TWG_RAW_SEGMENT_CORRUPT',
      `${manifestPath} was written for cluster ${JSON.stringify(found.cluster)}, this sink is ` +
        `for ${JSON.stringify(o.cluster)}; one directory holds one cluster`,
    );
  }
  if (found.missing.length > 0) {
    const spans = found.missing.flatMap((m) => m.spans);
    throw new RawSinkError(
      'TWG_RAW_SEGMENT_MISSING',
      `${found.missing.length} segment${found.missing.length === 1 ? '' : 's'} the manifest ` +
        `lists as durable ${found.missing.length === 1 ? 'is' : 'are'} missing or truncated ` +
        `(${found.missing.map((m) => m.file).join(', ')}): raw no longer holds ` +
        `${describeSpans(spans)}. Re-read that range from the source (thalweg raw repair, ` +
        'then rewind the source position to it; see README "When raw has a hole")',
      { file: join(o.dir, found.missing[0]?.file ?? ''), spans },
    );
  }
  if (found.strangers.length > 0) {
    throw new RawSinkError(
      'TWG_RAW_MANIFEST_CORRUPT',
      `${o.dir} holds segments its manifest does not list inside its sequence ` +
        `(${found.strangers.join(', ')}): not written by this directory's writer`,
    );
  }
  if (found.torn !== 'none') await o.fs.truncate(manifestPath, found.sound);
  if (found.torn === 'whole-line' && found.unlisted.length > 0) {
    // Most likely a torn append, but a synced line damaged later looks the
    // same: its segment may have been confirmed, so it is kept for a person.
    await keepAside(o.fs, o.dir, found.unlisted);
    o.log(
      `raw ${o.dir}: the manifest's last line was torn or damaged; ` +
        `${found.unlisted.join(', ')} moved to ${DAMAGED_DIR}/ (see README "When raw has a hole")`,
    );
  } else {
    for (const name of found.unlisted) await o.fs.remove(join(o.dir, name));
  }
  await removeTemps(o.fs, o.dir, found.temps);
  if (found.unlisted.length > 0) await o.fs.syncDir(o.dir);
  const index = new SegmentIndex();
  for (const entry of found.entries) {
    index.add(entry.file, entry.sequence, entry.layout, entry.batches);
  }
  return { index, nextSequence: found.nextSequence };
}

async function removeTemps(fs: SegmentFs, dir: string, temps: readonly string[]): Promise<void> {
  for (const name of temps) await fs.remove(join(dir, name));
  if (temps.length > 0) await fs.syncDir(dir);
}

/** The manifest's header, made durable whole (temp, fsync, rename, directory fsync). */
async function createManifest(fs: SegmentFs, dir: string, cluster: string): Promise<void> {
  const temp = join(dir, `.${MANIFEST_FILE}.tmp`);
  await fs.remove(temp);
  const file = await fs.create(temp);
  try {
    await file.write([manifestHeader(cluster)]);
    await file.sync();
  } finally {
    await file.close();
  }
  await fs.rename(temp, join(dir, MANIFEST_FILE));
  await fs.syncDir(dir);
}
