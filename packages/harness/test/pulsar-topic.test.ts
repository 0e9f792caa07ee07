import { decodeMessageId, DEFAULT_OFFSET_LAYOUT, messageOffset } from '@thalweg/source-pulsar';
import { describe, expect, it } from 'vitest';
import { cursorAcknowledged, parseCursor } from '../src/pulsar-cursor.js';
import { pulsarPositions } from '../src/pulsar-topic.js';
import type { RawContents, RawRecord } from '../src/raw-audit.js';

/** A MessageIdData as the producer gets it back: ledger and entry, no partition, no batch. */
function producerId(ledger: number, entry: number): string {
  return Buffer.from([0x08, ledger, 0x10, entry]).toString('base64');
}

function raw(offsets: number[]): RawContents {
  const held = new Map<number, RawRecord>(
    offsets.map((o) => [o, { recordId: `r${String(o)}`, payloadId: `p${String(o)}` }]),
  );
  return { records: [held], copies: offsets.length, errors: [] };
}

describe('a Pulsar run’s positions', () => {
  // Entries 20:0 .. 20:9, one message each (batching off).
  const ids = Array.from({ length: 10 }, (_, e) => producerId(20, e));
  const placed = ids.map((id) => {
    const parts = decodeMessageId(id);
    return {
      at: { ledger: parts.ledgerId, entry: parts.entryId },
      offset: messageOffset(parts, DEFAULT_OFFSET_LAYOUT, id),
    };
  });
  const positionsOf = (mark: string, ranges: string) => {
    const cursor = parseCursor(mark, ranges);
    const acked = new Set(
      placed.filter((m) => cursorAcknowledged(cursor, m.at)).map((m) => m.offset),
    );
    return pulsarPositions('persistent://public/default/t', [acked], acked.size);
  };

  it('maps a producer’s ids to the offsets the source gives them (one entry apart)', () => {
    expect(placed[1]?.offset).toBe((placed[0]?.offset ?? 0) + 2 ** DEFAULT_OFFSET_LAYOUT.batchBits);
  });

  it('finds no lead while everything acknowledged is in raw, lagging or not', () => {
    const p = positionsOf('20:2', '[(20:4..20:6]]');
    expect(p.done).toBe(5);
    const inRaw = placed.slice(0, 7).map((m) => m.offset);
    expect(p.leads(raw(inRaw))).toEqual([]);
    expect(p.acknowledged(0, placed[5]?.offset ?? -1)).toBe(true);
    expect(p.acknowledged(0, placed[3]?.offset ?? -1)).toBe(false);
  });

  it('names a message acknowledged individually that raw does not hold', () => {
    const p = positionsOf('20:2', '[(20:4..20:6]]');
    const lacking = placed[6]?.offset ?? -1;
    const inRaw = placed.map((m) => m.offset).filter((o) => o !== lacking);
    expect(p.leads(raw(inRaw))).toEqual([
      `persistent://public/default/t/0: 1 acknowledged messages raw lacks, first at offset ${String(lacking)}`,
    ]);
  });

  it('names a message below the mark-delete position that raw does not hold', () => {
    const p = positionsOf('20:2', '[]');
    const inRaw = placed.map((m) => m.offset).filter((o) => o !== placed[0]?.offset);
    expect(p.leads(raw(inRaw))).toHaveLength(1);
  });
});
