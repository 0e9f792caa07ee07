import type { SourceCursor } from '@thalweg/connector-core';
import type { CursorKey } from './coverage-store.js';
import { CoverageError } from './errors.js';
import { checkName, checkPartition } from './receipt-check.js';

const KINDS: ReadonlySet<string> = new Set([
  'log-offset',
  'file-set',
  'table-version',
  'stream-token',
  'page',
]);

/** Refuses a cursor key that could not be read back as written (LevelDB keeps a u32 partition). */
export function checkCursorKey(key: CursorKey): void {
  checkName(key.source, 'cursor key source');
  checkName(key.topic, 'cursor key topic');
  checkPartition(key.partition, 'cursor key partition');
}

/** Refuses a cursor or key that could not be read back as written. */
export function checkCursor(key: CursorKey, cursor: SourceCursor): void {
  checkCursorKey(key);
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
