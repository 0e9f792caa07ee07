import type { SourceCursor } from '@thalweg/connector-core';
import type { CursorKey } from './coverage-store.js';
import { CoverageError } from './errors.js';

const KINDS: ReadonlySet<string> = new Set(['file-set', 'table-version', 'stream-token', 'page']);

/** Refuses a cursor or key that could not be read back as written. */
export function checkCursor(key: CursorKey, cursor: SourceCursor): void {
  if (typeof key.source !== 'string' || key.source.length === 0 || key.source.includes('\u0000')) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `cursor key source: ${JSON.stringify(key.source)} must be a non-empty string without NUL`,
    );
  }
  if (!KINDS.has(cursor.kind)) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `cursor.kind: ${JSON.stringify(cursor.kind)} is not a known cursor kind`,
    );
  }
  if (!Number.isSafeInteger(cursor.nextOffset) || cursor.nextOffset < 0) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `cursor.nextOffset: ${String(cursor.nextOffset)} is not a non-negative safe integer`,
    );
  }
}

/**
 * Of the stored and the offered cursor, the one to keep. Every writer saves
 * only positions that raw durably holds, so the further one is as safe as the
 * nearer and loses less replay; taking the offered one on a tie lets a
 * source refresh its own metadata (a file list) at the same position.
 */
export function laterCursor(stored: SourceCursor | null, offered: SourceCursor): SourceCursor {
  return stored !== null && stored.nextOffset > offered.nextOffset ? stored : offered;
}

export function cursorKeyId(key: CursorKey): string {
  return `${key.source}\u0000${key.topic}\u0000${key.partition}`;
}
