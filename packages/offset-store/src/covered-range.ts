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
