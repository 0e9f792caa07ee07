import type { OffsetSpan } from '@thalweg/connector-core';
import { checksumHex, checksumOf } from './checksum.js';
import { RawSinkError, reasonOf } from './errors.js';
import type { SegmentFile, SegmentFs } from './segment-fs.js';
import type { SegmentLayout } from './segment-layout.js';

/** The directory manifest's file name. */
export const MANIFEST_FILE = 'raw.manifest';
const FORMAT = 'twg-raw-manifest';
const VERSION = 1;

/** A batch as the manifest lists it. */
export interface ManifestBatch {
  readonly span: OffsetSpan;
  readonly records: number;
}

/** One durable segment, as recorded before anything it holds was confirmed. */
export interface ManifestEntry {
  readonly sequence: number;
  readonly file: string;
  readonly layout: SegmentLayout;
  readonly batches: readonly ManifestBatch[];
}

/** The manifest as read: its cluster, every entry, and how many of its bytes are whole lines. */
export interface ParsedManifest {
  readonly cluster: string;
  readonly entries: readonly ManifestEntry[];
  /** Bytes of complete, checked lines: a torn last line (a crash mid-append) lies beyond. */
  readonly sound: number;
  readonly torn: TornLine;
}

/**
 * How the manifest ends: `none`, every line whole and checked; `partial`, a
 * last line without its newline (an append cut short); `whole-line`, a last
 * line with its newline that fails its checksum or does not parse: what a
 * disk that writes sector by sector leaves when it loses the start of an
 * append and keeps its end.
 */
export type TornLine = 'none' | 'partial' | 'whole-line';

/**
 * `raw.manifest`: what raw made durable, one line per segment, appended and
 * fsynced after the segment's rename and directory fsync and BEFORE any of
 * its batches is confirmed (ADR 0014). So a segment the manifest lists was
 * acknowledged or may have been, and must be there; one it does not list
 * was never acknowledged. It doubles as the persisted index: open reads
 * this file, not the segments.
 *
 * Each line is `<crc32c of the JSON, 8 hex> <JSON>\n`. The first is the
 * header `{"format":"twg-raw-manifest","version":1,"cluster":…}`; then one
 * `{"seq":N,"file":…,"bytes":…,"head":crc,"tail":crc,"batches":[[topic,
 * partition,start,end,records,at,length,crc],…]}` per segment. A last line
 * without its newline, or with it but failing its checksum, is a torn append
 * (never fsynced, nothing confirmed from it: each append is synced before
 * the next begins, so only the last can be torn); any other line that fails
 * its checksum is damage. A last line that was synced and then damaged looks
 * the same as a torn one: the segment it named is then kept aside
 * (segment-scan.ts), and a source position beyond what raw holds is refused
 * at the pipeline's open.
 */
export function parseManifest(bytes: Uint8Array, path: string): ParsedManifest {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let cluster: string | null = null;
  const entries: ManifestEntry[] = [];
  let at = 0;
  let line = 0;
  while (at < text.byteLength) {
    const end = text.indexOf(0x0a, at);
    if (end === -1) {
      return { cluster: needCluster(cluster, path), entries, sound: at, torn: 'partial' };
    }
    line++;
    try {
      const body = parseLine(text.subarray(at, end), path, line);
      if (line === 1) cluster = parseHeader(body, path);
      else entries.push(parseEntry(body, path, line));
    } catch (error) {
      const last = end + 1 === text.byteLength;
      if (!last || line === 1) throw error;
      return { cluster: needCluster(cluster, path), entries, sound: at, torn: 'whole-line' };
    }
    at = end + 1;
  }
  return { cluster: needCluster(cluster, path), entries, sound: at, torn: 'none' };
}

export function manifestHeader(cluster: string): Uint8Array {
  return lineOf({ format: FORMAT, version: VERSION, cluster });
}

export function manifestLine(entry: ManifestEntry): Uint8Array {
  const l = entry.layout;
  return lineOf({
    seq: entry.sequence,
    file: entry.file,
    bytes: l.bytes,
    head: l.head,
    tail: l.tail,
    batches: entry.batches.map((b, i) => {
      const at = l.batches[i];
      return [
        b.span.topic,
        b.span.partition,
        b.span.start,
        b.span.end,
        b.records,
        at?.at ?? 0,
        at?.length ?? 0,
        at?.crc ?? 0,
      ];
    }),
  });
}

function lineOf(value: unknown): Uint8Array {
  const json = Buffer.from(JSON.stringify(value));
  return Buffer.concat([Buffer.from(`${checksumHex(checksumOf(json))} `), json, Buffer.from('\n')]);
}

/**
 * Appends entries to the manifest of a directory, each made durable (write,
 * fsync) before `append` resolves. A failed append leaves the manifest with
 * a torn or unsynced last line and ends the writer: retrying after an
 * unknown partial write could put a damaged line in the middle.
 */
export class ManifestAppender {
  private constructor(private readonly file: SegmentFile) {}

  static async open(fs: SegmentFs, path: string): Promise<ManifestAppender> {
    return new ManifestAppender(await fs.append(path));
  }

  async append(entry: ManifestEntry): Promise<void> {
    await this.file.write([manifestLine(entry)]);
    await this.file.sync();
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

function parseLine(line: Buffer, path: string, n: number): unknown {
  const json = line.subarray(9);
  const crc = line.subarray(0, 8).toString();
  if (line[8] !== 0x20 || checksumHex(checksumOf(json)) !== crc) {
    damaged(path, n, 'fails its checksum');
  }
  try {
    return JSON.parse(json.toString()) as unknown;
  } catch (cause) {
    return damaged(path, n, `is not JSON: ${reasonOf(cause)}`);
  }
}

function parseHeader(body: unknown, path: string): string {
  const h = body as { format?: unknown; version?: unknown; cluster?: unknown };
  if (h.format !== FORMAT || h.version !== VERSION || typeof h.cluster !== 'string') {
    damaged(path, 1, `is not a ${FORMAT} version ${VERSION} header`);
  }
  return h.cluster;
}

function parseEntry(body: unknown, path: string, n: number): ManifestEntry {
  const e = body as {
    seq?: unknown;
    file?: unknown;
    bytes?: unknown;
    head?: unknown;
    tail?: unknown;
    batches?: unknown;
  };
  const int = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (
    !int(e.seq) ||
    typeof e.file !== 'string' ||
    !int(e.bytes) ||
    !int(e.head) ||
    !int(e.tail) ||
    !Array.isArray(e.batches)
  ) {
    damaged(path, n, 'is not a segment entry');
  }
  const batches: ManifestBatch[] = [];
  const layout: SegmentLayout['batches'][number][] = [];
  for (const b of e.batches as unknown[]) {
    const [topic, partition, start, end, records, at, length, crc] = b as unknown[];
    if (
      typeof topic !== 'string' ||
      ![partition, start, end, records, at, length, crc].every(int) ||
      (end as number) <= (start as number)
    ) {
      damaged(path, n, 'lists a batch that is not [topic, partition, start, end, …]');
    }
    batches.push({
      span: { topic, partition: partition as number, start: start as number, end: end as number },
      records: records as number,
    });
    layout.push({ at: at as number, length: length as number, crc: crc as number });
  }
  return {
    sequence: e.seq as number,
    file: e.file,
    layout: {
      bytes: e.bytes as number,
      head: e.head as number,
      tail: e.tail as number,
      batches: layout,
    },
    batches,
  };
}

function needCluster(cluster: string | null, path: string): string {
  if (cluster === null) damaged(path, 1, 'is missing: the manifest has no header');
  return cluster;
}

function damaged(path: string, line: number, reason: string): never {
  throw new RawSinkError('TWG_RAW_MANIFEST_CORRUPT', `manifest ${path} line ${line} ${reason}`);
}
