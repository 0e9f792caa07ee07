import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import { checkWindow, type CoveredRange } from './covered-range.js';
import type {
  CoverageDelta,
  CoverageKey,
  CoverageStore,
  CursorKey,
  DurableReceipt,
} from './coverage-store.js';
import { checkCursor, checkCursorKey } from './cursor-check.js';
import { CoverageError } from './errors.js';
import type { RangeSet } from './range-set.js';
import { checkDeltas, checkKey, deltasFromReceipts } from './receipt-check.js';

/**
 * The part every backend shares: validation of a whole call before any
 * write (so a refused call changes nothing), receipts turned into deltas,
 * and the closed state. Backends implement only storage.
 */
export abstract class CoverageBackend implements CoverageStore {
  protected readonly sinks: ReadonlySet<SinkId>;
  private closed = false;

  protected constructor(sinks: readonly SinkId[]) {
    this.sinks = new Set(sinks);
  }

  async recordDurable(receipts: readonly DurableReceipt[]): Promise<void> {
    this.ensureOpen();
    const deltas = deltasFromReceipts(receipts, this.sinks);
    if (deltas.length > 0) await this.mergeChecked(deltas);
  }

  async merge(deltas: readonly CoverageDelta[]): Promise<void> {
    this.ensureOpen();
    checkDeltas(deltas, this.sinks);
    if (deltas.some((d) => d.ranges.length > 0)) await this.mergeChecked(deltas);
  }

  async covered(key: CoverageKey): Promise<RangeSet> {
    this.ensureOpen();
    checkKey(key, this.sinks);
    return this.read(key);
  }

  async gaps(key: CoverageKey, from: number, to: number): Promise<CoveredRange[]> {
    checkWindow(from, to, 'gaps');
    return (await this.covered(key)).gaps(from, to);
  }

  knows(sink: SinkId): boolean {
    return this.sinks.has(sink);
  }

  async destinations(): Promise<CoverageKey[]> {
    this.ensureOpen();
    return this.listDestinations();
  }

  /** Backends that write durably on every merge have nothing to checkpoint. */
  async checkpoint(): Promise<void> {
    this.ensureOpen();
  }

  async saveCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    this.ensureOpen();
    checkCursor(key, cursor);
    await this.writeCursor(key, cursor);
  }

  async rewindCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    this.ensureOpen();
    checkCursor(key, cursor);
    await this.replaceCursor(key, cursor);
  }

  async loadCursor(key: CursorKey): Promise<SourceCursor | null> {
    this.ensureOpen();
    checkCursorKey(key);
    return this.readCursor(key);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.release();
  }

  protected ensureOpen(): void {
    if (this.closed) throw new CoverageError('TWG_COVERAGE_CLOSED', 'the coverage store is closed');
  }

  /** Union-merges validated deltas; all or nothing. */
  protected abstract mergeChecked(deltas: readonly CoverageDelta[]): Promise<void>;
  protected abstract read(key: CoverageKey): Promise<RangeSet>;
  protected abstract listDestinations(): Promise<CoverageKey[]>;
  /** Keeps the later of the stored and the offered cursor (see laterCursor). */
  protected abstract writeCursor(key: CursorKey, cursor: SourceCursor): Promise<void>;
  /** Replaces the stored cursor with a lower one, refused by checkRewind in the same atomic step as the write. */
  protected abstract replaceCursor(key: CursorKey, cursor: SourceCursor): Promise<void>;
  protected abstract readCursor(key: CursorKey): Promise<SourceCursor | null>;
  protected abstract release(): Promise<void>;
}
