import { CoverageError } from './errors.js';

/**
 * Offsets `[start, end)` of one (sink, topic, partition) that the sink has
 * durably written. Half-open, like `OffsetSpan`, so adjacent ranges touch:
 * `a.end === b.start`.
 */
export interface CoveredRange {
  readonly start: number;
  readonly end: number;
}

export function coveredRange(start: number, end: number): CoveredRange {
  checkRange(start, end);
  return { start, end };
}

export function checkRange(start: number, end: number, where = 'range'): void {
  if (!Number.isSafeInteger(start) || start < 0) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `${where}.start: ${String(start)} is not a non-negative safe integer`,
    );
  }
  if (!Number.isSafeInteger(end) || end <= start) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `${where}.end: [${String(start)}, ${String(end)}) is empty, inverted or not a safe integer`,
    );
  }
}

/**
 * A window a read asks about, `[from, to)`: the same offsets the writes
 * accept (non-negative safe integers, ADR 0004), with `from <= to` (an empty
 * window has no gaps). A read of an impossible window would answer with
 * impossible gaps (negative, infinite, past 2^53), which a planner would then
 * try to replay: refused instead, naming the bound.
 */
export function checkWindow(from: number, to: number, where = 'window'): void {
  if (!Number.isSafeInteger(from) || from < 0) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `${where}.from: ${String(from)} is not a non-negative safe integer`,
    );
  }
  if (!Number.isSafeInteger(to) || to < from) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `${where}.to: [${String(from)}, ${String(to)}) is inverted or not a safe integer`,
    );
  }
}
