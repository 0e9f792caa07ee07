import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import type { CoverageDelta, CursorKey } from '../coverage-store.js';
import { CoverageError } from '../errors.js';

/**
 * An entry of the local tier's not-yet-checkpointed log: coverage ranges or a
 * cursor recorded locally that the durable tier does not have yet.
 */
export type LogEntry =
  | {
      readonly t: 'cov';
      readonly sink: string;
      readonly topic: string;
      readonly partition: number;
      readonly ranges: readonly (readonly [number, number])[];
    }
  | { readonly t: 'cur'; readonly key: CursorKey; readonly cursor: SourceCursor };

export function coverageEntry(delta: CoverageDelta): LogEntry {
  return {
    t: 'cov',
    sink: delta.key.sink,
    topic: delta.key.topic,
    partition: delta.key.partition,
    ranges: delta.ranges.map((r) => [r.start, r.end] as const),
  };
}

export function decodeLogEntry(value: Uint8Array, seq: number): LogEntry {
  let entry: unknown;
  try {
    entry = JSON.parse(Buffer.from(value).toString('utf8'));
  } catch (cause) {
    throw new CoverageError('TWG_COVERAGE_CORRUPT', `local log entry ${seq} is not JSON`, cause);
  }
  const e = entry as Partial<Record<string, unknown>>;
  if (e['t'] === 'cov' && Array.isArray(e['ranges'])) return entry as LogEntry;
  if (e['t'] === 'cur' && typeof e['cursor'] === 'object') return entry as LogEntry;
  throw new CoverageError('TWG_COVERAGE_CORRUPT', `local log entry ${seq} has an unknown shape`);
}

export function deltaOf(entry: Extract<LogEntry, { t: 'cov' }>): CoverageDelta {
  return {
    key: { sink: entry.sink as SinkId, topic: entry.topic, partition: entry.partition },
    ranges: entry.ranges.map(([start, end]) => ({ start, end })),
  };
}
