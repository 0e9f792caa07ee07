import { DURABLE_KINDS, formatSpan, type SinkId } from '@thalweg/connector-core';
import { checkRange, type CoveredRange } from './covered-range.js';
import type { CoverageDelta, CoverageKey, DurableReceipt } from './coverage-store.js';
import { CoverageError } from './errors.js';

/**
 * The checks every backend runs on a whole call before writing anything, so
 * that a refused call changes nothing: the sink is known, the receipt proves
 * durability (JavaScript callers bypass the type), the span is a valid range.
 * Returns the receipts grouped into one delta per destination.
 */
export function deltasFromReceipts(
  receipts: readonly DurableReceipt[],
  sinks: ReadonlySet<SinkId>,
): CoverageDelta[] {
  const byKey = new Map<string, { key: CoverageKey; ranges: CoveredRange[] }>();
  for (const r of receipts) {
    checkSink(r.sink, sinks);
    if (!(DURABLE_KINDS as readonly string[]).includes(r.durability)) {
      throw new CoverageError(
        'TWG_COVERAGE_NOT_DURABLE',
        `receipt for ${formatSpan(r.span)} of sink "${r.sink}" has durability "${r.durability}", ` +
          'which does not prove a durable acknowledgement; coverage recorded from it could over-claim',
      );
    }
    const key = { sink: r.sink, topic: r.span.topic, partition: r.span.partition };
    checkKey(key, sinks);
    checkRange(r.span.start, r.span.end, `receipt(${r.sink}).span`);
    const id = coverageKeyId(key);
    let entry = byKey.get(id);
    if (entry === undefined) byKey.set(id, (entry = { key, ranges: [] }));
    entry.ranges.push({ start: r.span.start, end: r.span.end });
  }
  return [...byKey.values()];
}

/** Validates deltas handed straight to a tier (a checkpoint, a test). */
export function checkDeltas(deltas: readonly CoverageDelta[], sinks: ReadonlySet<SinkId>): void {
  for (const d of deltas) {
    checkKey(d.key, sinks);
    for (const r of d.ranges) checkRange(r.start, r.end, `delta(${d.key.sink}).range`);
  }
}

export function checkKey(key: CoverageKey, sinks: ReadonlySet<SinkId>): void {
  checkSink(key.sink, sinks);
  checkName(key.topic, 'topic');
  checkPartition(key.partition, 'partition');
}

// With the u flag a surrogate pair is one code point, so this matches only
// unpaired surrogates.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * A topic or source name every backend stores as written: UTF-8 (LevelDB
 * keys, PostgreSQL text) turns every lone surrogate into U+FFFD, which would
 * give two names one destination; NUL separates the parts of map keys.
 */
export function checkName(value: string, field: string): void {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.includes('\u0000') ||
    LONE_SURROGATE.test(value)
  ) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `${field}: ${JSON.stringify(value)} must be a non-empty, well-formed Unicode string without NUL`,
    );
  }
}

export function checkPartition(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > 0x7fffffff) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `${field}: ${String(value)} is not a partition number in [0, 2^31)`,
    );
  }
}

export function checkSink(sink: SinkId, sinks: ReadonlySet<SinkId>): void {
  if (!sinks.has(sink)) {
    throw new CoverageError(
      'TWG_COVERAGE_UNKNOWN_SINK',
      `sink "${sink}" is not one of this store's sinks (${[...sinks].join(', ') || 'none'})`,
    );
  }
}

/** A map key for a destination; NUL cannot occur in a sink id or topic. */
export function coverageKeyId(key: CoverageKey): string {
  return `${key.sink}\u0000${key.topic}\u0000${key.partition}`;
}
