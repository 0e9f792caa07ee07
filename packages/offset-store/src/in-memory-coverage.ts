import { type SinkId, type SourceCursor } from '@thalweg/connector-core';
import type { CoveredRange } from './covered-range.js';
import type { CoverageKey, CoverageStore, CursorKey, DurableReceipt } from './coverage-store.js';
import { CoverageError } from './errors.js';
import { checkReceipt, checkSink } from './receipt-check.js';
import { RangeSet } from './range-set.js';

/**
 * Coverage held in process memory: for tests, and for single-process use
 * where losing coverage on exit is acceptable (everything replays from the
 * last durable position, absorbed by record-id dedup).
 */
export class InMemoryCoverage implements CoverageStore {
  private readonly sinks: ReadonlySet<SinkId>;
  private readonly sets = new Map<string, { key: CoverageKey; set: RangeSet }>();
  private readonly cursors = new Map<string, SourceCursor>();
  private closed = false;

  constructor(options: { readonly sinks: readonly SinkId[] }) {
    this.sinks = new Set(options.sinks);
  }

  async recordDurable(receipts: readonly DurableReceipt[]): Promise<void> {
    this.ensureOpen();
    // Validate the whole call before touching anything: a refused call changes nothing.
    for (const r of receipts) checkReceipt(r, this.sinks);
    for (const r of receipts) {
      const key: CoverageKey = { sink: r.sink, topic: r.span.topic, partition: r.span.partition };
      this.entry(key).set.add(r.span.start, r.span.end);
    }
  }

  async covered(key: CoverageKey): Promise<RangeSet> {
    this.ensureOpen();
    this.ensureSink(key.sink);
    return this.sets.get(id(key))?.set.clone() ?? new RangeSet();
  }

  async gaps(key: CoverageKey, from: number, to: number): Promise<CoveredRange[]> {
    return (await this.covered(key)).gaps(from, to);
  }

  async destinations(): Promise<CoverageKey[]> {
    this.ensureOpen();
    return [...this.sets.values()].map((e) => e.key);
  }

  async checkpoint(): Promise<void> {
    this.ensureOpen();
  }

  async saveCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    this.ensureOpen();
    this.cursors.set(cursorId(key), structuredClone(cursor));
  }

  async loadCursor(key: CursorKey): Promise<SourceCursor | null> {
    this.ensureOpen();
    const c = this.cursors.get(cursorId(key));
    return c === undefined ? null : structuredClone(c);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private entry(key: CoverageKey): { key: CoverageKey; set: RangeSet } {
    const k = id(key);
    let e = this.sets.get(k);
    if (e === undefined) {
      e = {
        key: { sink: key.sink, topic: key.topic, partition: key.partition },
        set: new RangeSet(),
      };
      this.sets.set(k, e);
    }
    return e;
  }

  private ensureSink(sink: SinkId): void {
    checkSink(sink, this.sinks);
  }

  private ensureOpen(): void {
    if (this.closed) throw new CoverageError('TWG_COVERAGE_CLOSED', 'the coverage store is closed');
  }
}

function id(key: CoverageKey): string {
  return `${key.sink}\u0000${key.topic}\u0000${key.partition}`;
}

function cursorId(key: CursorKey): string {
  return `${key.source}\u0000${key.topic}\u0000${key.partition}`;
}
