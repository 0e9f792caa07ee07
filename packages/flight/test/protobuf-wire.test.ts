import { describe, expect, it } from 'vitest';
import { ProtoWriter, encodeVarint, readFields, readVarint } from '../src/protobuf-wire.js';
import { thrown } from './fixtures.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('varints', () => {
  it('encode the protobuf documentation vectors', () => {
    expect(encodeVarint(0)).toEqual(bytes(0x00));
    expect(encodeVarint(1)).toEqual(bytes(0x01));
    expect(encodeVarint(127)).toEqual(bytes(0x7f));
    expect(encodeVarint(150)).toEqual(bytes(0x96, 0x01));
    expect(encodeVarint(300)).toEqual(bytes(0xac, 0x02));
    // field 1000, wire type 2: (1000 << 3) | 2 = 8002
    expect(encodeVarint(8002)).toEqual(bytes(0xc2, 0x3e));
  });

  it('write a negative int64 as its ten-byte two’s complement', () => {
    expect(encodeVarint(-1)).toEqual(
      bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
    );
  });

  it('round trip at the edges of 64 bits', () => {
    for (const v of [0n, 1n, 127n, 128n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 1n]) {
      const encoded = encodeVarint(v);
      expect(readVarint(encoded, 0, 't')).toEqual([v, encoded.byteLength]);
    }
  });

  it('refuse a varint that runs past the end, or past 64 bits', () => {
    expect(() => readVarint(bytes(0x80, 0x80), 0, 'T')).toThrow(/T: a varint runs past the end/);
    const eleven = bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);
    expect(() => readVarint(eleven, 0, 'T')).toThrow(/longer than 10 bytes/);
    const overflow = bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02);
    expect(() => readVarint(overflow, 0, 'T')).toThrow(/longer than 64 bits/);
  });
});

describe('fields', () => {
  it('are written as key, then value', () => {
    const out = new ProtoWriter().varint(1, 150).string(2, 'hi').bytes(1000, bytes(7)).finish();
    expect(out).toEqual(bytes(0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69, 0xc2, 0x3e, 0x01, 0x07));
    expect([...readFields(out, 'M')]).toEqual([
      { field: 1, wireType: 0, value: 150n },
      { field: 2, wireType: 2, bytes: bytes(0x68, 0x69) },
      { field: 1000, wireType: 2, bytes: bytes(0x07) },
    ]);
  });

  it('skip fixed-width fields of numbers they do not know', () => {
    // field 7 fixed32, field 8 fixed64, then field 1 = 5
    const m = bytes(0x3d, 1, 2, 3, 4, 0x41, 1, 2, 3, 4, 5, 6, 7, 8, 0x08, 0x05);
    expect([...readFields(m, 'M')]).toEqual([{ field: 1, wireType: 0, value: 5n }]);
  });

  it('refuse a length that does not fit, with the byte where the field starts', () => {
    const m = bytes(0x08, 0x01, 0x12, 0x05, 0x61);
    expect(thrown(() => [...readFields(m, 'M', 100)])).toMatchObject({
      code: 'TWG_FLIGHT_PROTOBUF_INVALID',
      offset: 102,
      reason: 'M: field 2 of 5 bytes does not fit the 1 left',
    });
  });

  it('refuse field number 0, groups and truncated fixed fields', () => {
    expect(() => [...readFields(bytes(0x00, 0x01), 'M')]).toThrow(/field number 0/);
    expect(() => [...readFields(bytes(0x0b), 'M')]).toThrow(/wire type 3/);
    expect(() => [...readFields(bytes(0x0d, 1, 2), 'M')]).toThrow(/field 1 is truncated/);
  });

  it('refuse field numbers protobuf does not allow', () => {
    expect(() => new ProtoWriter().varint(0, 1)).toThrow(RangeError);
    expect(() => new ProtoWriter().varint(2 ** 29, 1)).toThrow(RangeError);
  });
});
