import { describe, expect, it } from 'vitest';
import {
  checkOffsetLayout,
  decodeMessageId,
  DEFAULT_OFFSET_LAYOUT,
  messageOffset,
  PulsarSourceError,
} from '../src/index.js';

/** Protobuf of MessageIdData, written here field by field so the decoder is checked against it. */
function encode(fields: readonly [field: number, value: bigint][]): string {
  const out: number[] = [];
  const varint = (v: bigint): void => {
    let x = BigInt.asUintN(64, v);
    do {
      const b = Number(x & 0x7fn);
      x >>= 7n;
      out.push(x === 0n ? b : b | 0x80);
    } while (x !== 0n);
  };
  for (const [field, value] of fields) {
    varint(BigInt(field << 3));
    varint(value);
  }
  return Buffer.from(out).toString('base64');
}

describe('decodeMessageId', () => {
  it('reads an id the broker sent (ledger 20, entry 0, batch size 0)', () => {
    expect(decodeMessageId('CBQQADAA')).toEqual({
      ledgerId: 20n,
      entryId: 0n,
      partition: -1,
      batchIndex: -1,
      batchSize: 0,
    });
  });

  it('reads partition, batch index and size, and a ledger id past 2^53', () => {
    const big = (1n << 60n) + 5n;
    const id = encode([
      [1, big],
      [2, 3n],
      [3, 1n],
      [4, 63n],
      [6, 71n],
    ]);
    expect(decodeMessageId(id)).toEqual({
      ledgerId: big,
      entryId: 3n,
      partition: 1,
      batchIndex: 63,
      batchSize: 71,
    });
  });

  it('reads a negative int32 as the protocol encodes it (ten bytes)', () => {
    const id = encode([
      [1, 1n],
      [2, 2n],
      [3, -1n],
    ]);
    expect(decodeMessageId(id).partition).toBe(-1);
  });

  it('skips fields it does not place a message by (ack_set, a chunk id)', () => {
    const withAckSet = Buffer.concat([
      Buffer.from(
        encode([
          [1, 7n],
          [2, 8n],
        ]),
        'base64',
      ),
      Buffer.from([(5 << 3) | 2, 2, 0xff, 0x01]),
    ]).toString('base64');
    expect(decodeMessageId(withAckSet)).toMatchObject({ ledgerId: 7n, entryId: 8n });
  });

  it.each([
    ['', 'is not base64'],
    ['not base64!', 'is not base64'],
    [Buffer.from([0x08]).toString('base64'), 'ends inside a field'],
    [encode([[1, 4n]]), 'has no ledger or entry id'],
    [Buffer.from([0x0a, 0x05, 0x01]).toString('base64'), 'runs past the end'],
  ])('refuses %j: it %s, naming the id', (id, why) => {
    expect(() => decodeMessageId(id)).toThrow(PulsarSourceError);
    expect(() => decodeMessageId(id)).toThrow(why);
  });
});

describe('messageOffset', () => {
  const at = (ledgerId: bigint, entryId: bigint, batchIndex: number) =>
    messageOffset(
      { ledgerId, entryId, partition: 0, batchIndex, batchSize: 0 },
      DEFAULT_OFFSET_LAYOUT,
    );

  it('ascends with ledger, entry and batch index, a lone message counting as index 0', () => {
    const ids = [
      at(5n, 0n, -1),
      at(5n, 0n, 1),
      at(5n, 1n, 0),
      at(5n, 131_071n, 1023),
      at(6n, 0n, -1),
    ];
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(at(5n, 1n, -1)).toBe(at(5n, 1n, 0));
  });

  it('stays a safe integer at the largest ledger id the layout holds', () => {
    const top = (1n << 26n) - 1n;
    expect(Number.isSafeInteger(at(top, 131_071n, 1023))).toBe(true);
  });

  it('refuses what the layout cannot hold, naming the field and the setting', () => {
    expect(() => at(1n << 26n, 0n, 0)).toThrow(
      /ledger id 67108864 needs more than the 26 bits offsetBits/,
    );
    expect(() => at(1n, 1n << 17n, 0)).toThrow(/entry id 131072 needs more than the 17 bits/);
    expect(() => at(1n, 0n, 1024)).toThrow(/batch index 1024 needs more than the 10 bits/);
  });

  it('takes another layout, and refuses one that leaves ledger ids too few bits', () => {
    const layout = checkOffsetLayout({ entryBits: 20, batchBits: 12 });
    expect(
      messageOffset(
        { ledgerId: 1n, entryId: 0n, partition: 0, batchIndex: -1, batchSize: 0 },
        layout,
      ),
    ).toBe(2 ** 32);
    expect(() => checkOffsetLayout({ entryBits: 30, batchBits: 10 })).toThrow(/at least 16/);
    expect(() => checkOffsetLayout({ entryBits: 0, batchBits: 10 })).toThrow(/whole numbers/);
  });
});
