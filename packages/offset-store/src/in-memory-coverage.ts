import { parseConfig, type SinkId, type SourceCursor } from '@thalweg/connector-core';
import { z } from 'zod';
import { CoverageBackend } from './coverage-backend.js';
import type { CoverageDelta, CoverageKey, CursorKey } from './coverage-store.js';
import { checkRewind, cursorKeyId, laterCursor } from './cursor-check.js';
import { RangeSet } from './range-set.js';
import { coverageKeyId } from './receipt-check.js';
import { sinkList } from './store-options.js';

export interface InMemoryCoverageOptions {
  readonly sinks: readonly SinkId[];
}

const inMemoryCoverageSchema = z.strictObject(
  { sinks: sinkList },
  { error: 'must be an object { sinks }' },
);

/**
 * Coverage held in process memory: for tests, and for single-process use
 * where losing coverage on exit is acceptable (everything replays from the
 * last durable position, absorbed by record-id dedup).
 */
export class InMemoryCoverage extends CoverageBackend {
  private readonly sets = new Map<string, { key: CoverageKey; set: RangeSet }>();
  private readonly cursors = new Map<string, SourceCursor>();

  constructor(options: InMemoryCoverageOptions) {
    super(parseConfig(inMemoryCoverageSchema, options, 'inMemoryCoverage').sinks);
  }

  protected async mergeChecked(deltas: readonly CoverageDelta[]): Promise<void> {
    for (const d of deltas) {
      const id = coverageKeyId(d.key);
      let entry = this.sets.get(id);
      if (entry === undefined) {
        const key = { sink: d.key.sink, topic: d.key.topic, partition: d.key.partition };
        this.sets.set(id, (entry = { key, set: new RangeSet() }));
      }
      entry.set.addAll(d.ranges);
    }
  }

  protected async read(key: CoverageKey): Promise<RangeSet> {
    return this.sets.get(coverageKeyId(key))?.set.clone() ?? new RangeSet();
  }

  protected async listDestinations(): Promise<CoverageKey[]> {
    return [...this.sets.values()].filter((e) => e.set.rangeCount > 0).map((e) => e.key);
  }

  protected async writeCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    const id = cursorKeyId(key);
    this.cursors.set(id, structuredClone(laterCursor(this.cursors.get(id) ?? null, cursor)));
  }

  protected async replaceCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    const id = cursorKeyId(key);
    checkRewind(key, this.cursors.get(id) ?? null, cursor);
    this.cursors.set(id, structuredClone(cursor));
  }

  protected async readCursor(key: CursorKey): Promise<SourceCursor | null> {
    const c = this.cursors.get(cursorKeyId(key));
    return c === undefined ? null : structuredClone(c);
  }

  protected async release(): Promise<void> {
    this.sets.clear();
  }
}
