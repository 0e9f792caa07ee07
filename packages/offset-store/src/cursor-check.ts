import type { SourceCursor } from '@thalweg/connector-core';
import type { CursorKey } from './coverage-store.js';
import { CoverageError } from './errors.js';
import { checkName, checkPartition } from './receipt-check.js';

const KINDS: ReadonlySet<string> = new Set([
  'log-offset',
  'file-set',
  'table-version',
  'stream-token',
  'message-id',
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
  if (
    cursor.kind === 'message-id' &&
    (typeof cursor.messageId !== 'string' || cursor.messageId.length === 0)
  ) {
    throw new CoverageError(
      'TWG_COVERAGE_RANGE_INVALID',
      `cursor.messageId: ${JSON.stringify(cursor.messageId)} is not a non-empty message id`,
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

/**
 * Refuses a rewind that is not one: of a key with no stored cursor (the
 * source would start where its own default puts it, which may be ahead),
 * to another kind of cursor (the source could not resume from it), or to a
 * position above the stored one. A forward move may only come from raw's
 * durable acknowledgement, through `saveCursor`. A rewind to the stored
 * position is allowed, so a rewind that failed part-way can be repeated.
 */
export function checkRewind(
  key: CursorKey,
  stored: SourceCursor | null,
  offered: SourceCursor,
): void {
  const where = `cursor ${key.source} ${key.topic}/${key.partition}`;
  if (stored === null) {
    throw new CoverageError(
      'TWG_COVERAGE_REWIND_REFUSED',
      `${where}: no cursor is stored, so there is nothing to rewind`,
    );
  }
  if (stored.kind !== offered.kind) {
    throw new CoverageError(
      'TWG_COVERAGE_REWIND_REFUSED',
      `${where}: the stored cursor is a ${stored.kind} cursor, the rewind offers a ${offered.kind} one`,
    );
  }
  if (offered.nextOffset > stored.nextOffset) {
    throw new CoverageError(
      'TWG_COVERAGE_REWIND_REFUSED',
      `${where}: a rewind to ${offered.nextOffset} would move the cursor forward from ` +
        `${stored.nextOffset}; only raw's durable acknowledgement moves a cursor forward`,
    );
  }
}

export function cursorKeyId(key: CursorKey): string {
  return `${key.source}\u0000${key.topic}\u0000${key.partition}`;
}
