import { ClassicLevel } from 'classic-level';
import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import { CoverageBackend } from '../coverage-backend.js';
import type { CoverageDelta, CoverageKey, CursorKey } from '../coverage-store.js';
import { laterCursor } from '../cursor-check.js';
import { CoverageError } from '../errors.js';
import { RangeSet } from '../range-set.js';
import { coverageKeyId } from '../receipt-check.js';
import {
  cursorKey,
  decodeLogKey,
  decodeRangeKey,
  destinationPrefix,
  encodeEnd,
  logKey,
  META_KEY,
  prefixBounds,
  rangeKey,
  readU64,
  RANGE,
  LOG,
} from './leveldb-keys.js';
import { coverageEntry, decodeLogEntry, deltaOf, type LogEntry } from './local-log.js';

type Op = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface Unflushed {
  /** Highest log sequence included: pass it to `markCheckpointed`. */
  readonly throughSeq: number;
  readonly deltas: readonly CoverageDelta[];
  readonly cursors: readonly { readonly key: CursorKey; readonly cursor: SourceCursor }[];
}

export interface LocalDiagnostics {
  readonly destinations: readonly {
    readonly key: CoverageKey;
    readonly ranges: number;
    readonly offsets: number;
    /** Holes between the lowest and highest covered offset: what recovery will replay. */
    readonly innerGaps: readonly { start: number; end: number }[];
  }[];
  /** Log entries recorded here and not yet in the durable tier. */
  readonly unflushedEntries: number;
  readonly lastCheckpointAt: number | null;
}

/**
 * The pod-local tier on LevelDB: one key per covered range, written cheaply
 * on every durable receipt, never read by another process (LevelDB's own lock
 * refuses a second opener), never the only copy for longer than a checkpoint
 * interval. Every merge also appends to a local log of what the durable tier
 * lacks; `unflushed`/`markCheckpointed` drain it.
 *
 * Coverage is mirrored in memory (the tier holds only this pod's partitions),
 * so a merge computes the minimal put/delete set in memory and writes it with
 * the log entry in one atomic batch; memory is updated only after the batch
 * succeeds, so a failed write changes nothing.
 */
export class LevelDbCoverage extends CoverageBackend {
  private readonly sets = new Map<string, { key: CoverageKey; set: RangeSet }>();
  private readonly cursors = new Map<string, SourceCursor>();
  private nextSeq = 0;
  private lastCheckpointAt: number | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    sinks: readonly SinkId[],
  ) {
    super(sinks);
  }

  static async open(options: {
    readonly location: string;
    readonly sinks: readonly SinkId[];
  }): Promise<LevelDbCoverage> {
    const db = new ClassicLevel<Buffer, Buffer>(options.location, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
    });
    try {
      await db.open();
    } catch (cause) {
      throw new CoverageError(
        'TWG_COVERAGE_BACKEND',
        `cannot open the local tier at ${options.location} (is another process using it?)`,
        cause,
      );
    }
    const store = new LevelDbCoverage(db, options.sinks);
    try {
      await store.load();
    } catch (e) {
      await db.close();
      throw e;
    }
    return store;
  }

  /** What the local tier has that the durable tier may not. */
  async unflushed(): Promise<Unflushed> {
    return this.serial(async () => {
      this.ensureOpen();
      const deltas: CoverageDelta[] = [];
      const cursors: { key: CursorKey; cursor: SourceCursor }[] = [];
      let throughSeq = -1;
      for await (const [k, v] of this.db.iterator(prefixBounds(Buffer.from([LOG])))) {
        throughSeq = decodeLogKey(k);
        const entry = decodeLogEntry(v, throughSeq);
        if (entry.t === 'cov') deltas.push(deltaOf(entry));
        else cursors.push({ key: entry.key, cursor: entry.cursor });
      }
      return { throughSeq, deltas, cursors };
    });
  }

  /** The durable tier now holds every log entry up to `throughSeq`. */
  async markCheckpointed(throughSeq: number, at: number): Promise<void> {
    await this.serial(async () => {
      this.ensureOpen();
      const ops: Op[] = [];
      for await (const k of this.db.keys({ gte: logKey(0), lte: logKey(throughSeq) }))
        ops.push({ type: 'del', key: k });
      ops.push({
        type: 'put',
        key: META_KEY,
        value: Buffer.from(JSON.stringify({ version: 1, lastCheckpointAt: at })),
      });
      await this.db.batch(ops);
      this.lastCheckpointAt = at;
    });
  }

  async diagnostics(): Promise<LocalDiagnostics> {
    this.ensureOpen();
    const unflushedEntries = (await this.db.keys(prefixBounds(Buffer.from([LOG]))).all()).length;
    return {
      destinations: [...this.sets.values()].map(({ key, set }) => {
        const ranges = set.ranges();
        const first = ranges[0]?.start ?? 0;
        const last = ranges[ranges.length - 1]?.end ?? 0;
        return {
          key,
          ranges: set.rangeCount,
          offsets: set.offsetCount,
          innerGaps: set.gaps(first, last),
        };
      }),
      unflushedEntries,
      lastCheckpointAt: this.lastCheckpointAt,
    };
  }

  protected async mergeChecked(deltas: readonly CoverageDelta[]): Promise<void> {
    await this.serial(async () => {
      this.ensureOpen();
      const ops: Op[] = [];
      const updated: { id: string; key: CoverageKey; set: RangeSet }[] = [];
      let seq = this.nextSeq;
      for (const d of deltas) {
        const id = coverageKeyId(d.key);
        const before = this.sets.get(id)?.set ?? new RangeSet();
        const after = before.clone();
        after.addAll(d.ranges);
        const { removed, added } = diff(before, after);
        if (added.length === 0) continue;
        const prefix = destinationPrefix(d.key);
        for (const r of removed) ops.push({ type: 'del', key: rangeKey(prefix, r.start) });
        for (const r of added)
          ops.push({ type: 'put', key: rangeKey(prefix, r.start), value: encodeEnd(r.end) });
        ops.push({
          type: 'put',
          key: logKey(seq++),
          value: encodeLog(coverageEntry({ key: d.key, ranges: added })),
        });
        updated.push({
          id,
          key: { sink: d.key.sink, topic: d.key.topic, partition: d.key.partition },
          set: after,
        });
      }
      if (ops.length === 0) return;
      await this.write(ops);
      this.nextSeq = seq;
      for (const u of updated) this.sets.set(u.id, { key: u.key, set: u.set });
    });
  }

  protected async read(key: CoverageKey): Promise<RangeSet> {
    return this.sets.get(coverageKeyId(key))?.set.clone() ?? new RangeSet();
  }

  protected async listDestinations(): Promise<CoverageKey[]> {
    return [...this.sets.values()].map((e) => e.key);
  }

  protected async writeCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    await this.serial(async () => {
      this.ensureOpen();
      const id = cursorKey(key).toString('hex');
      const kept = laterCursor(this.cursors.get(id) ?? null, cursor);
      const entry: LogEntry = {
        t: 'cur',
        key: { source: key.source, topic: key.topic, partition: key.partition },
        cursor: kept,
      };
      await this.write([
        { type: 'put', key: cursorKey(key), value: Buffer.from(JSON.stringify(kept)) },
        { type: 'put', key: logKey(this.nextSeq), value: encodeLog(entry) },
      ]);
      this.nextSeq += 1;
      this.cursors.set(id, structuredClone(kept));
    });
  }

  protected async readCursor(key: CursorKey): Promise<SourceCursor | null> {
    const c = this.cursors.get(cursorKey(key).toString('hex'));
    return c === undefined ? null : structuredClone(c);
  }

  protected async release(): Promise<void> {
    await this.chain.catch(() => undefined);
    await this.db.close();
  }

  private async write(ops: Op[]): Promise<void> {
    try {
      await this.db.batch(ops);
    } catch (cause) {
      throw new CoverageError(
        'TWG_COVERAGE_BACKEND',
        'the local tier refused a write; nothing was recorded',
        cause,
      );
    }
  }

  /** Merges and checkpoints run one at a time: each computes from the state the previous left. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async load(): Promise<void> {
    for await (const [k, v] of this.db.iterator(prefixBounds(Buffer.from([RANGE])))) {
      if (v.length !== 8)
        throw new CoverageError(
          'TWG_COVERAGE_CORRUPT',
          `local range entry ${k.toString('hex')} has a ${v.length}-byte value`,
        );
      const { key, start } = decodeRangeKey(k);
      const id = coverageKeyId(key);
      let entry = this.sets.get(id);
      if (entry === undefined) this.sets.set(id, (entry = { key, set: new RangeSet() }));
      entry.set.add(start, readU64(v, 0));
    }
    for await (const [k, v] of this.db.iterator(prefixBounds(Buffer.from([0x03])))) {
      this.cursors.set(k.toString('hex'), JSON.parse(v.toString('utf8')) as SourceCursor);
    }
    for await (const k of this.db.keys({
      ...prefixBounds(Buffer.from([LOG])),
      reverse: true,
      limit: 1,
    })) {
      this.nextSeq = decodeLogKey(k) + 1;
    }
    const meta = await this.db.get(META_KEY);
    if (meta !== undefined) {
      const parsed = JSON.parse(meta.toString('utf8')) as {
        version: number;
        lastCheckpointAt: number | null;
      };
      if (parsed.version > 1)
        throw new CoverageError(
          'TWG_COVERAGE_SCHEMA_NEWER',
          `the local tier was written by layout version ${parsed.version}; this code knows 1`,
        );
      this.lastCheckpointAt = parsed.lastCheckpointAt;
    }
  }
}

function encodeLog(entry: LogEntry): Buffer {
  return Buffer.from(JSON.stringify(entry));
}

/** Ranges of `before` that `after` swallowed, and ranges of `after` that are new (after ⊇ before, both normal). */
function diff(
  before: RangeSet,
  after: RangeSet,
): { removed: { start: number; end: number }[]; added: { start: number; end: number }[] } {
  const was = new Set(before.ranges().map((r) => `${r.start}:${r.end}`));
  const now = after.ranges();
  const kept = new Set<string>();
  const added = now.filter((r) => {
    const id = `${r.start}:${r.end}`;
    if (was.has(id)) {
      kept.add(id);
      return false;
    }
    return true;
  });
  const removed = before.ranges().filter((r) => !kept.has(`${r.start}:${r.end}`));
  return { removed, added };
}
