import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import {
  checkWindow,
  InMemoryCoverage,
  RangeSet,
  type CoverageDelta,
  type CoverageKey,
  type CoverageStore,
  type CoveredRange,
  type CursorKey,
  type DurableReceipt,
} from '@thalweg/offset-store';

/**
 * A local tier in front of a durable one, as `WriteBehindCoverage` is:
 * coverage lands locally, `checkpoint` copies it to the durable tier, and
 * losing the process loses what was not checkpointed. Reads union both.
 */
export class TieredCoverage implements CoverageStore {
  readonly local: InMemoryCoverage;

  constructor(
    readonly durable: InMemoryCoverage,
    sinks: readonly SinkId[],
  ) {
    this.local = new InMemoryCoverage({ sinks });
  }

  recordDurable(receipts: readonly DurableReceipt[]): Promise<void> {
    return this.local.recordDurable(receipts);
  }

  merge(deltas: readonly CoverageDelta[]): Promise<void> {
    return this.local.merge(deltas);
  }

  async covered(key: CoverageKey): Promise<RangeSet> {
    return RangeSet.union(await this.local.covered(key), await this.durable.covered(key));
  }

  async gaps(key: CoverageKey, from: number, to: number): Promise<CoveredRange[]> {
    checkWindow(from, to, 'gaps');
    return (await this.covered(key)).gaps(from, to);
  }

  knows(sink: SinkId): boolean {
    return this.local.knows(sink) && this.durable.knows(sink);
  }

  async destinations(): Promise<CoverageKey[]> {
    const keys = new Map<string, CoverageKey>();
    for (const k of [...(await this.local.destinations()), ...(await this.durable.destinations())])
      keys.set(`${k.sink}/${k.topic}/${k.partition}`, k);
    return [...keys.values()];
  }

  async checkpoint(): Promise<void> {
    const deltas: CoverageDelta[] = [];
    for (const key of await this.local.destinations()) {
      deltas.push({ key, ranges: (await this.local.covered(key)).ranges() });
    }
    await this.durable.merge(deltas);
  }

  saveCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    return this.durable.saveCursor(key, cursor);
  }

  rewindCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    return this.durable.rewindCursor(key, cursor);
  }

  loadCursor(key: CursorKey): Promise<SourceCursor | null> {
    return this.durable.loadCursor(key);
  }

  async close(): Promise<void> {
    // The test reads both tiers after the pipeline shut down.
  }
}
