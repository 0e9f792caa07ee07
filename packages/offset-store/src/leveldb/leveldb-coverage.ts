import { ClassicLevel } from 'classic-level';
import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import { CoverageBackend } from '../coverage-backend.js';
import type { CoverageDelta, CoverageKey, CursorKey } from '../coverage-store.js';
import { checkRewind, laterCursor } from '../cursor-check.js';
import { CoverageError } from '../errors.js';
import { describeHolder, recordHolder } from './leveldb-holder.js';
import type { CoveredRange } from '../covered-range.js';
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
import {
  decodeLogEntry,
  encodeCoverageEntry,
  encodeCursorEntry,
  isCursorEntryOf,
} from './local-log.js';
import { parseLevelDbCoverageOptions, type LevelDbCoverageOptions } from './leveldb-options.js';
import type { LevelDbTier, LocalDiagnostics, Unflushed } from './leveldb-tier.js';

type Op = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

/**
 * Coverage on LevelDB: one key per covered range, written cheaply on every
 * durable receipt, never read by another process (LevelDB's own lock refuses
 * a second opener).
 *
 * Two ways to serve (LevelDbTier). As the pod-local tier of a
 * `WriteBehindCoverage` (which claims it with `serveAsLocalTier`), every
 * merge also appends to a local log of what the durable tier lacks, and
 * `unflushed`/`markCheckpointed` drain it. Used on its own it is the durable
 * tier, colocated with raw: there is nothing to send anywhere, so it keeps no
 * log (one would only grow), and `checkpoint` removes what a previous life as
 * a local tier left in it. Its writes are not fsynced either way: coverage or
 * a cursor lost with the machine is lag (a replay), never lead.
 *
 * Coverage is mirrored in memory (the tier holds only this pod's partitions),
 * so a merge computes the minimal put/delete set in memory and writes it with
 * the log entry in one atomic batch; a failed write is taken back in memory,
 * and reads wait for the batch, so no caller sees a write that failed.
 */
export class LevelDbCoverage extends CoverageBackend {
  private readonly sets = new Map<string, { readonly key: CoverageKey; set: RangeSet }>();
  private readonly cursors = new Map<string, SourceCursor>();
  private nextSeq = 0;
  private lastCheckpointAt: number | null = null;
  private tier: LevelDbTier = 'durable';
  private lastWrittenAs: LevelDbTier | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    sinks: readonly SinkId[],
  ) {
    super(sinks);
  }

  static async open(input: LevelDbCoverageOptions): Promise<LevelDbCoverage> {
    const options = parseLevelDbCoverageOptions(input);
    const db = new ClassicLevel<Buffer, Buffer>(options.location, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
    });
    try {
      await db.open();
    } catch (cause) {
      const locked = /lock/i.test(String((cause as { cause?: unknown }).cause ?? cause));
      const holder = locked ? await describeHolder(options.location) : null;
      throw new CoverageError(
        'TWG_COVERAGE_BACKEND',
        `cannot open the local tier at ${options.location} ` +
          (holder === null ? '(is another process using it?)' : `: it is open in ${holder}`),
        cause,
      );
    }
    await recordHolder(options.location);
    const store = new LevelDbCoverage(db, options.sinks);
    try {
      await store.load();
    } catch (e) {
      await db.close();
      throw e;
    }
    return store;
  }

  /**
   * From now on this store is the local tier in front of a durable one: it
   * logs what that tier lacks until `markCheckpointed`. Called by
   * `WriteBehindCoverage`; what was merged before is not in the log.
   */
  serveAsLocalTier(): void {
    this.ensureOpen();
    this.tier = 'local';
  }

  /**
   * As the durable tier: forgets any log entry (left by a life as a local
   * tier; none is written now). As a local tier: nothing, the write-behind
   * store checkpoints it.
   */
  override async checkpoint(): Promise<void> {
    this.ensureOpen();
    if (this.tier === 'local') return;
    await this.serial(async () => {
      this.ensureOpen();
      const ops: Op[] = [];
      for await (const k of this.db.keys(prefixBounds(Buffer.from([LOG]))))
        ops.push({ type: 'del', key: k });
      if (ops.length === 0 && this.lastWrittenAs === 'durable') return;
      const at = Date.now();
      ops.push({ type: 'put', key: META_KEY, value: this.meta(at, 'durable') });
      await this.write(ops);
      this.lastCheckpointAt = at;
      this.lastWrittenAs = 'durable';
    });
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
        if (entry.t === 'cov') deltas.push(entry.delta);
        else cursors.push({ key: entry.key, cursor: entry.cursor });
      }
      return { throughSeq, deltas, cursors };
    });
  }

  /** The durable tier now holds every log entry up to `throughSeq`. */
  async markCheckpointed(throughSeq: number, at: number): Promise<void> {
    // -1: `unflushed` found an empty log; there is nothing to forget.
    if (throughSeq < 0) return;
    await this.serial(async () => {
      this.ensureOpen();
      const ops: Op[] = [];
      for await (const k of this.db.keys({ gte: logKey(0), lte: logKey(throughSeq) }))
        ops.push({ type: 'del', key: k });
      ops.push({ type: 'put', key: META_KEY, value: this.meta(at, this.tier) });
      await this.db.batch(ops);
      this.lastCheckpointAt = at;
      this.lastWrittenAs = this.tier;
    });
  }

  async diagnostics(): Promise<LocalDiagnostics> {
    this.ensureOpen();
    const unflushedEntries = (await this.db.keys(prefixBounds(Buffer.from([LOG]))).all()).length;
    return {
      tier: this.tier,
      lastWrittenAs: this.lastWrittenAs,
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
      // What each delta changed in memory, to take back if the batch fails.
      const changes: { id: string; removed: CoveredRange[]; added: CoveredRange[] }[] = [];
      let seq = this.nextSeq;
      try {
        for (const d of deltas) {
          const id = coverageKeyId(d.key);
          let entry = this.sets.get(id);
          if (entry === undefined) {
            const key = { sink: d.key.sink, topic: d.key.topic, partition: d.key.partition };
            this.sets.set(id, (entry = { key, set: new RangeSet() }));
          }
          const { removed, added } = track(entry.set, d.ranges);
          if (added.length === 0) continue;
          changes.push({ id, removed, added });
          const prefix = destinationPrefix(d.key);
          for (const r of removed) ops.push({ type: 'del', key: rangeKey(prefix, r.start) });
          for (const r of added)
            ops.push({ type: 'put', key: rangeKey(prefix, r.start), value: encodeEnd(r.end) });
          if (this.tier === 'local') {
            ops.push({
              type: 'put',
              key: logKey(seq++),
              value: encodeCoverageEntry({ key: d.key, ranges: added }),
            });
          }
        }
        if (ops.length > 0) await this.writeNoted(ops);
        this.nextSeq = seq;
      } catch (e) {
        // The batch is atomic: it is on disk whole or not at all. Memory was
        // updated ahead of it, so each change is taken back, latest first:
        // what a delta found is what it left, less what it added, plus what
        // it swallowed. Readers wait for this (see read), so none saw it.
        for (const { id, removed, added } of changes.reverse()) {
          const entry = this.sets.get(id);
          if (entry === undefined) continue;
          const gone = new Set(added.map((r) => r.start));
          const kept = entry.set.ranges().filter((r) => !gone.has(r.start));
          entry.set = RangeSet.of([...kept, ...removed]);
        }
        throw e;
      }
    });
  }

  /** Queued behind merges: memory runs ahead of disk while a batch is in flight. */
  protected async read(key: CoverageKey): Promise<RangeSet> {
    return this.serial(
      async () => this.sets.get(coverageKeyId(key))?.set.clone() ?? new RangeSet(),
    );
  }

  protected async listDestinations(): Promise<CoverageKey[]> {
    return this.serial(async () =>
      [...this.sets.values()].filter((e) => e.set.rangeCount > 0).map((e) => e.key),
    );
  }

  protected async writeCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    await this.serial(async () => {
      this.ensureOpen();
      const id = cursorKey(key).toString('hex');
      const kept = laterCursor(this.cursors.get(id) ?? null, cursor);
      const ops: Op[] = [
        { type: 'put', key: cursorKey(key), value: Buffer.from(JSON.stringify(kept)) },
      ];
      const logged = this.tier === 'local';
      if (logged) {
        ops.push({
          type: 'put',
          key: logKey(this.nextSeq),
          value: encodeCursorEntry(
            { source: key.source, topic: key.topic, partition: key.partition },
            kept,
          ),
        });
      }
      await this.writeNoted(ops);
      if (logged) this.nextSeq += 1;
      this.cursors.set(id, structuredClone(kept));
    });
  }

  /** Also drops the key's unflushed log entries: a checkpoint would carry their later cursors over the rewind. */
  protected async replaceCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    await this.serial(async () => {
      this.ensureOpen();
      const id = cursorKey(key).toString('hex');
      checkRewind(key, this.cursors.get(id) ?? null, cursor);
      const ops: Op[] = [
        { type: 'put', key: cursorKey(key), value: Buffer.from(JSON.stringify(cursor)) },
      ];
      for await (const [k, v] of this.db.iterator(prefixBounds(Buffer.from([LOG]))))
        if (isCursorEntryOf(v, decodeLogKey(k), key)) ops.push({ type: 'del', key: k });
      await this.writeNoted(ops);
      this.cursors.set(id, structuredClone(cursor));
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

  /** Writes `ops`; the first write of a process also records how it serves, for who inspects it later. */
  private async writeNoted(ops: Op[]): Promise<void> {
    const tier = this.tier;
    if (this.lastWrittenAs === tier) return this.write(ops);
    await this.write([
      ...ops,
      { type: 'put', key: META_KEY, value: this.meta(this.lastCheckpointAt, tier) },
    ]);
    this.lastWrittenAs = tier;
  }

  private meta(lastCheckpointAt: number | null, tier: LevelDbTier): Buffer {
    return Buffer.from(JSON.stringify({ version: 1, lastCheckpointAt, tier }));
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
        tier?: LevelDbTier;
      };
      if (parsed.version > 1)
        throw new CoverageError(
          'TWG_COVERAGE_SCHEMA_NEWER',
          `the local tier was written by layout version ${parsed.version}; this code knows 1`,
        );
      this.lastCheckpointAt = parsed.lastCheckpointAt;
      this.lastWrittenAs = parsed.tier ?? null;
    }
  }
}

/**
 * Adds `ranges` to `set` and returns the net change against the stored keys:
 * stored ranges swallowed (to delete) and ranges that are new (to put). A
 * range added by this call and swallowed later in the same call is neither.
 */
function track(
  set: RangeSet,
  ranges: readonly CoveredRange[],
): { removed: CoveredRange[]; added: CoveredRange[] } {
  const added = new Map<number, CoveredRange>();
  const removed: CoveredRange[] = [];
  for (const r of ranges) {
    const change = set.addTracked(r.start, r.end);
    if (change === null) continue;
    for (const gone of change.removed) {
      const mine = added.get(gone.start);
      if (mine !== undefined && mine.end === gone.end) added.delete(gone.start);
      else removed.push(gone);
    }
    added.set(change.merged.start, change.merged);
  }
  return { removed, added: [...added.values()] };
}
