import type { HeldPartition, OffsetSpan, SourceBatch } from '@thalweg/connector-core';
import {
  OffsetRuns,
  RAW_TABLE_COLUMNS,
  RAW_TABLE_SPAN_COLUMNS,
  RawSpanTally,
  rawBatchesOf,
  type RawTableSpan,
} from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { IcebergError } from '../errors.js';
import { readParquetBatches } from '../parquet-data.js';
import type { LoadedTable } from '../rest-catalog.js';
import { findSnapshot, type Snapshot } from '../table-metadata.js';
import { liveDataFiles, mapLimited, planWindow, type IcebergSource } from '../window-scan.js';

export interface IcebergRawOptions {
  readonly source: IcebergSource;
  readonly namespace: string | readonly string[];
  /** A table of raw table rows (stream-arrow `RAW_TABLE_FIELDS`), as a lakehouse raw writes them. */
  readonly table: string;
}

/** What the last look at the table saw. */
export interface RawVisibility {
  /** The snapshot `held()` last read; null before it ran, or while the table has none. */
  readonly snapshotId: bigint | null;
  /** When that snapshot was committed (ms since the epoch). */
  readonly committedAtMs: number | null;
  /** Batches of which some rows, not all, were visible in it: not held yet. */
  readonly partialBatches: number;
  /** Live data files, and how many of them had to be read (the rest were tallied before). */
  readonly files: number;
  readonly filesRead: number;
}

interface Pinned {
  readonly loaded: LoadedTable;
  readonly snapshot: Snapshot;
  readonly tally: RawSpanTally;
}

const READ_CONCURRENCY = 8;

const sameSpan = (a: RawTableSpan, b: RawTableSpan): boolean =>
  a.topic === b.topic &&
  a.partition === b.partition &&
  a.start === b.start &&
  a.end === b.end &&
  a.records === b.records;

/**
 * Raw read back through Iceberg: what a lakehouse raw (Zerobus writing
 * Delta, its Iceberg metadata generated after each commit) holds, and its
 * records by offset window, for recovery.
 *
 * `held()` reads the table's current snapshot and counts, per batch, the
 * distinct offsets its rows show (stream-arrow raw-table-rows.ts): only
 * batches seen whole are held. Iceberg metadata trails the data it
 * describes, so what is held trails what the writer was acknowledged for;
 * it never leads it. Data files never change, so each is read (its span
 * columns only) once and its tally kept while it is live.
 *
 * `read(span)` reads the snapshot `held()` last saw (so a window is never
 * read from a table state older than the one it was planned from), and
 * yields the whole batches that overlap `span`, each offset once: where two
 * batches overlap (a source read again after a crash), the later one starts
 * where the earlier ended.
 */
export class IcebergRaw {
  private tallies = new Map<string, RawSpanTally>();
  private pinned: Pinned | null = null;
  private seen: RawVisibility = {
    snapshotId: null,
    committedAtMs: null,
    partialBatches: 0,
    files: 0,
    filesRead: 0,
  };

  constructor(private readonly options: IcebergRawOptions) {}

  /** `ns.table`, as errors name it. */
  get name(): string {
    const { namespace, table } = this.options;
    return [...(typeof namespace === 'string' ? [namespace] : namespace), table].join('.');
  }

  visibility(): RawVisibility {
    return this.seen;
  }

  /** What the table's current snapshot holds whole, per partition, as ascending spans. */
  async held(): Promise<HeldPartition[]> {
    const pinned = await this.pin();
    if (pinned === null) return [];
    const byPartition = new Map<string, { topic: string; partition: number; runs: OffsetRuns }>();
    for (const s of pinned.tally.complete()) {
      const key = `${s.partition}\u0000${s.topic}`;
      let p = byPartition.get(key);
      if (p === undefined) {
        p = { topic: s.topic, partition: s.partition, runs: new OffsetRuns() };
        byPartition.set(key, p);
      }
      p.runs.addRange(s.start, s.end);
    }
    return [...byPartition.values()].map(({ topic, partition, runs }) => ({
      partition: { topic, partition },
      spans: runs.runs().map(([start, end]) => ({ topic, partition, start, end })),
    }));
  }

  /** The whole batches overlapping `span`, in offset order, from the snapshot `held()` last read. */
  async *read(span: OffsetSpan, signal?: AbortSignal): AsyncGenerator<SourceBatch> {
    const pinned = this.pinned ?? (await this.pin());
    if (pinned === null) return;
    const overlapping = pinned.tally
      .complete()
      .filter(
        (s) =>
          s.topic === span.topic &&
          s.partition === span.partition &&
          s.end > span.start &&
          s.start < span.end,
      );
    const first = overlapping[0];
    if (first === undefined) return;
    const last = overlapping[overlapping.length - 1] ?? first;
    // rows are found by their batch's start, so a batch begun before the span comes whole
    const scan = await planWindow(this.options.source, pinned.loaded, {
      namespace: this.options.namespace,
      table: this.options.table,
      columns: { partition: RAW_TABLE_COLUMNS.partition, offset: RAW_TABLE_COLUMNS.spanStart },
      partition: span.partition,
      start: first.start,
      end: last.start + 1,
      snapshotId: pinned.snapshot.id,
    });
    const rows: RecordBatch[] = [];
    for await (const b of scan.batches()) {
      signal?.throwIfAborted();
      rows.push(b);
    }
    const batches = rawBatchesOf(rows, scan.table, (s) => overlapping.some((o) => sameSpan(o, s)));
    let next = 0;
    for (const b of batches) {
      signal?.throwIfAborted();
      const start = Math.max(b.span.start, next);
      if (b.span.end <= start) continue;
      next = b.span.end;
      yield start === b.span.start
        ? b
        : { span: { ...b.span, start }, records: b.records.filter((r) => r.offset >= start) };
    }
  }

  /** Loads the table, reads its current snapshot's tallies, and keeps them for `read`. */
  private async pin(): Promise<Pinned | null> {
    const { source, namespace, table } = this.options;
    let loaded: LoadedTable;
    try {
      loaded = await source.catalog.loadTable(namespace, table);
    } catch (e) {
      // nothing committed through Iceberg yet: nothing held
      if (e instanceof IcebergError && e.code === 'TWG_ICEBERG_TABLE_NOT_FOUND') {
        this.pinned = null;
        return null;
      }
      throw e;
    }
    if (loaded.metadata.currentSnapshotId === undefined) {
      this.pinned = null;
      return null;
    }
    const snapshot = findSnapshot(loaded.metadata, loaded.name);
    const live = await liveDataFiles(source, snapshot);
    let filesRead = 0;
    const perFile = await mapLimited(live, READ_CONCURRENCY, async (d) => {
      const known = this.tallies.get(d.path);
      if (known !== undefined) return [d.path, known] as const;
      filesRead += 1;
      const tally = new RawSpanTally();
      const bytes = await source.files.read(d.path);
      for (const b of readParquetBatches(bytes, d.path, d.recordCount, RAW_TABLE_SPAN_COLUMNS))
        tally.add(b, d.path);
      return [d.path, tally] as const;
    });
    // only live files are kept: a file compacted away is never read again
    this.tallies = new Map(perFile);
    const tally = new RawSpanTally();
    for (const [, t] of perFile) tally.merge(t);
    this.pinned = { loaded, snapshot, tally };
    this.seen = {
      snapshotId: snapshot.id,
      committedAtMs: snapshot.timestampMs,
      partialBatches: tally.partial().length,
      files: live.length,
      filesRead,
    };
    return this.pinned;
  }
}
