import { describe, expect, it } from 'vitest';
import { cursorAcknowledged, parseCursor } from '../src/pulsar-cursor.js';

const at = (ledger: number, entry: number) => ({ ledger: BigInt(ledger), entry: BigInt(entry) });

describe('a Pulsar cursor from internalStats', () => {
  it('acknowledges up to the mark-delete position and inside each (from..to] range', () => {
    const cursor = parseCursor('20:3', '[(20:5..20:7], (21:0..21:2]]');
    const acked = (l: number, e: number) => cursorAcknowledged(cursor, at(l, e));
    expect([0, 3].map((e) => acked(20, e))).toEqual([true, true]);
    expect(acked(19, 99)).toBe(true);
    expect([4, 5, 6, 7, 8].map((e) => acked(20, e))).toEqual([false, false, true, true, false]);
    expect([0, 1, 2, 3].map((e) => acked(21, e))).toEqual([false, true, true, false]);
    expect(acked(22, 0)).toBe(false);
  });

  it('reads an empty list and a fresh cursor (entry -1) as nothing beyond the mark', () => {
    const cursor = parseCursor('20:-1', '[]');
    expect(cursorAcknowledged(cursor, at(20, 0))).toBe(false);
    expect(cursorAcknowledged(cursor, at(19, 5))).toBe(true);
  });

  it('refuses what it cannot read, naming the field', () => {
    expect(() => parseCursor('20', '[]')).toThrow(/markDeletePosition: "20" is not ledger:entry/);
    expect(() => parseCursor('20:1', '[(20:1..20:3)]')).toThrow(
      /individuallyDeletedMessages: .* is not a list of ranges/,
    );
    expect(() => parseCursor('20:1', '(20:1..20:3]')).toThrow(/individuallyDeletedMessages/);
  });
});
