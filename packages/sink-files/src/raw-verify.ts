import { join } from 'node:path';
import { partitionKey, type OffsetSpan, type SourcePartition } from '@thalweg/connector-core';
import { RawSinkError, reasonOf, type RawErrorCode } from './errors.js';
import { OffsetRuns } from './offset-runs.js';
import type { ManifestEntry } from './raw-manifest.js';
import { decodeSegment } from './segment-codec.js';
import { nodeSegmentFs, type SegmentFs } from './segment-fs.js';
import { layoutDamage } from './segment-layout.js';
import { inventory } from './segment-scan.js';

/** One damaged or missing piece of raw. */
export interface RawDamage {
  readonly code: RawErrorCode;
  /** The segment (or manifest) file, a path. */
  readonly file: string;
  readonly position: number | null;
  /** The offset ranges it held: what raw can no longer vouch for. */
  readonly spans: readonly OffsetSpan[];
  readonly reason: string;
}

/** A partition: what raw soundly holds, and the holes in it. */
export interface RawPartitionCheck {
  readonly partition: SourcePartition;
  readonly held: readonly { readonly start: number; readonly end: number }[];
  /**
   * Offsets raw should hold and does not: between its held runs, and the
   * ranges of damaged or missing segments that no sound segment also holds.
   */
  readonly holes: readonly { readonly start: number; readonly end: number }[];
}

export interface RawCheck {
  readonly dir: string;
  readonly segments: number;
  readonly bytes: number;
  /** Whether every byte was read and checked against its checksum. */
  readonly checksums: boolean;
  readonly damage: readonly RawDamage[];
  readonly partitions: readonly RawPartitionCheck[];
}

/**
 * What a raw directory holds and what is wrong with it, reported by range and
 * never thrown: the manifest against the files (missing, truncated, unknown
 * segments; O(segments)), and with `checksums` every byte of every segment
 * against the checksums written with it, each damaged region reported
 * (`thalweg raw verify`). Reads only: safe next to a live writer, whose
 * segments not yet listed are not looked at.
 */
export async function checkRaw(
  dir: string,
  options: { readonly checksums: boolean; readonly fs?: SegmentFs },
): Promise<RawCheck> {
  const fs = options.fs ?? nodeSegmentFs;
  const damage: RawDamage[] = [];
  const runs = new Map<
    string,
    { partition: SourcePartition; held: OffsetRuns; lost: OffsetRuns }
  >();
  const runsOf = (span: OffsetSpan) => {
    const key = partitionKey(span);
    let entry = runs.get(key);
    if (entry === undefined) {
      entry = {
        partition: { topic: span.topic, partition: span.partition },
        held: new OffsetRuns(),
        lost: new OffsetRuns(),
      };
      runs.set(key, entry);
    }
    return entry;
  };
  const found = await inventory(fs, dir).catch((error: unknown) => {
    damage.push(asDamage(error, join(dir, 'raw.manifest'), []));
    return null;
  });
  let bytes = 0;
  if (found !== null) {
    for (const m of found.missing) {
      damage.push({
        code: 'TWG_RAW_SEGMENT_MISSING',
        file: join(dir, m.file),
        position: null,
        spans: m.spans,
        reason: 'listed as durable in the manifest, missing or not the size written',
      });
    }
    for (const name of found.strangers) {
      damage.push({
        code: 'TWG_RAW_MANIFEST_CORRUPT',
        file: join(dir, name),
        position: null,
        spans: [],
        reason: 'a segment inside the manifest sequence that the manifest does not list',
      });
    }
    const reads = options.checksums ? new SegmentReads(fs, dir, found.entries) : null;
    for (const entry of found.entries) {
      bytes += entry.layout.bytes;
      const found = reads === null ? [] : segmentDamage(dir, entry, await reads.next());
      damage.push(...found);
      for (const b of entry.batches) {
        // By value: damage found while parsing names spans read from the file.
        const sound = !found.some((d) => d.spans.some((s) => sameSpan(s, b.span)));
        (sound ? runsOf(b.span).held : runsOf(b.span).lost).add(b.span.start, b.span.end);
      }
    }
    for (const m of found.missing) for (const s of m.spans) runsOf(s).lost.add(s.start, s.end);
  }
  const partitions = [...runs.values()]
    .sort((a, b) =>
      a.partition.topic === b.partition.topic
        ? a.partition.partition - b.partition.partition
        : a.partition.topic < b.partition.topic
          ? -1
          : 1,
    )
    .map(({ partition, held, lost }) => ({
      partition,
      held: held.list(),
      holes: holesOf(held, lost),
    }));
  return {
    dir,
    segments: found?.entries.length ?? 0,
    bytes,
    checksums: options.checksums,
    damage,
    partitions,
  };
}

/** Gaps between the held runs, and lost ranges outside them, merged. */
function holesOf(held: OffsetRuns, lost: OffsetRuns): { start: number; end: number }[] {
  const holes = new OffsetRuns();
  const list = held.list();
  for (let i = 1; i < list.length; i++) {
    holes.add((list[i - 1] as { end: number }).end, (list[i] as { start: number }).start);
  }
  for (const l of lost.list()) {
    let at = l.start;
    for (const h of held.list(l.start, l.end)) {
      if (h.start > at) holes.add(at, h.start);
      at = Math.max(at, h.end);
    }
    if (at < l.end) holes.add(at, l.end);
  }
  return holes.list();
}

/**
 * The entries' segments read in order, the next one read while the current
 * one is checked (the read runs in libuv's pool, the checksums and decode on
 * this thread), into two buffers used in turn: a segment's bytes are dropped
 * once checked, so nothing is allocated per segment.
 */
class SegmentReads {
  private readonly scratch: [Uint8Array, Uint8Array];
  private index = 0;
  private ahead: Promise<Uint8Array | RawDamage> | null = null;

  constructor(
    private readonly fs: SegmentFs,
    private readonly dir: string,
    private readonly entries: readonly ManifestEntry[],
  ) {
    const largest = entries.reduce((max, e) => Math.max(max, e.layout.bytes), 0);
    this.scratch = [Buffer.allocUnsafe(largest), Buffer.allocUnsafe(largest)];
    if (entries.length > 0) this.ahead = this.read(0);
  }

  /** The next entry's bytes, or the damage its read failed with. */
  async next(): Promise<Uint8Array | RawDamage> {
    const current = this.ahead as Promise<Uint8Array | RawDamage>;
    const result = await current;
    this.index++;
    // Started only now: the buffer it reads into held the segment before the last.
    this.ahead = this.index < this.entries.length ? this.read(this.index) : null;
    return result;
  }

  private async read(i: number): Promise<Uint8Array | RawDamage> {
    const entry = this.entries[i] as ManifestEntry;
    const file = join(this.dir, entry.file);
    try {
      return await this.fs.readFile(file, this.scratch[i % 2]);
    } catch (error) {
      return asDamage(
        error,
        file,
        entry.batches.map((b) => b.span),
      );
    }
  }
}

function segmentDamage(
  dir: string,
  entry: ManifestEntry,
  read: Uint8Array | RawDamage,
): RawDamage[] {
  const file = join(dir, entry.file);
  const spans = entry.batches.map((b) => b.span);
  if (!(read instanceof Uint8Array)) return [read];
  const bytes = read;
  if (bytes.byteLength !== entry.layout.bytes) {
    return [
      {
        code: 'TWG_RAW_SEGMENT_MISSING',
        file,
        position: null,
        spans,
        reason: `is ${bytes.byteLength} bytes, ${entry.layout.bytes} were made durable`,
      },
    ];
  }
  try {
    // Checks every byte against the layout, then parses: one checksum pass when sound.
    decodeSegment(bytes, file, { layout: entry.layout, spans });
    return [];
  } catch (error) {
    // Damaged: every region that fails its checksum, or else what the parse found.
    const regions: RawDamage[] = [...layoutDamage(bytes, entry.layout, spans)].map((d) => ({
      code: 'TWG_RAW_CHECKSUM_MISMATCH',
      file,
      position: d.position,
      spans: d.spans,
      reason: d.reason,
    }));
    return regions.length > 0 ? regions : [asDamage(error, file, spans)];
  }
}

function asDamage(error: unknown, file: string, spans: readonly OffsetSpan[]): RawDamage {
  if (error instanceof RawSinkError) {
    return {
      code: error.code,
      file: error.file ?? file,
      position: error.position ?? null,
      spans: error.spans.length > 0 ? error.spans : spans,
      reason: error.reason,
    };
  }
  return {
    code: 'TWG_RAW_SEGMENT_CORRUPT',
    file,
    position: null,
    spans,
    reason: reasonOf(error),
  };
}

function sameSpan(a: OffsetSpan, b: OffsetSpan): boolean {
  return (
    a.topic === b.topic && a.partition === b.partition && a.start === b.start && a.end === b.end
  );
}
