import { HarnessError } from './errors.js';

/** A ledger position, `ledger:entry`. */
export interface EntryPosition {
  readonly ledger: bigint;
  readonly entry: bigint;
}

/**
 * A subscription's cursor as the admin API's `internalStats` shows it: every
 * entry at or below `markDelete` is acknowledged, and so is every entry in
 * an individually deleted range `(from..to]`.
 */
export interface PulsarCursor {
  readonly markDelete: EntryPosition;
  readonly ranges: readonly { readonly from: EntryPosition; readonly to: EntryPosition }[];
}

function compare(a: EntryPosition, b: EntryPosition): number {
  if (a.ledger !== b.ledger) return a.ledger < b.ledger ? -1 : 1;
  if (a.entry !== b.entry) return a.entry < b.entry ? -1 : 1;
  return 0;
}

function parsePosition(text: string, what: string): EntryPosition {
  const m = /^(-?\d+):(-?\d+)$/.exec(text.trim());
  if (m === null) {
    throw new HarnessError(
      'TWG_HARNESS_ARGS',
      `${what}: ${JSON.stringify(text)} is not ledger:entry`,
    );
  }
  return { ledger: BigInt(m[1] ?? ''), entry: BigInt(m[2] ?? '') };
}

/**
 * Parses a cursor's `markDeletePosition` (`"20:3"`) and
 * `individuallyDeletedMessages` (`"[(20:5..20:7], (21:0..21:4]]"`, `"[]"`).
 */
export function parseCursor(markDeletePosition: string, individuallyDeleted: string): PulsarCursor {
  const ranges: { from: EntryPosition; to: EntryPosition }[] = [];
  const body = individuallyDeleted.trim();
  if (!body.startsWith('[') || !body.endsWith(']')) {
    throw new HarnessError(
      'TWG_HARNESS_ARGS',
      `individuallyDeletedMessages: ${JSON.stringify(individuallyDeleted)} is not a list of ranges`,
    );
  }
  const inner = body.slice(1, -1).trim();
  const range = /\((-?\d+:-?\d+)\.\.(-?\d+:-?\d+)\]/g;
  let seen = 0;
  for (const m of inner.matchAll(range)) {
    ranges.push({
      from: parsePosition(m[1] ?? '', 'individuallyDeletedMessages'),
      to: parsePosition(m[2] ?? '', 'individuallyDeletedMessages'),
    });
    seen += m[0].length;
  }
  if (inner.replace(range, '').replace(/[,\s]/g, '') !== '' || (inner !== '' && seen === 0)) {
    throw new HarnessError(
      'TWG_HARNESS_ARGS',
      `individuallyDeletedMessages: ${JSON.stringify(individuallyDeleted)} is not a list of ranges`,
    );
  }
  return { markDelete: parsePosition(markDeletePosition, 'markDeletePosition'), ranges };
}

/** Whether the cursor acknowledged the entry. */
export function cursorAcknowledged(cursor: PulsarCursor, at: EntryPosition): boolean {
  if (compare(at, cursor.markDelete) <= 0) return true;
  return cursor.ranges.some((r) => compare(r.from, at) < 0 && compare(at, r.to) <= 0);
}
