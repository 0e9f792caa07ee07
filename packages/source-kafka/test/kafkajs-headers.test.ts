import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installWireHeaders, wireHeaders } from '../src/kafkajs-headers.js';

const load = createRequire(import.meta.url);
const root = dirname(load.resolve('kafkajs'));
const internal = (path: string): unknown => load(join(root, 'src', 'protocol', path));

interface Encoder {
  writeVarInt(n: number): Encoder;
  writeInt8(n: number): Encoder;
  writeVarLong(n: number): Encoder;
  writeVarIntString(s: string): Encoder;
  writeVarIntBytes(b: Buffer | null): Encoder;
  buffer: Buffer;
}
type Decode = (decoder: unknown, context: object) => { headers: Record<string, unknown> };
const EncoderClass = internal('encoder.js') as new () => Encoder;
const DecoderClass = internal('decoder.js') as new (b: Buffer) => unknown;
const decodeRecord = internal('recordBatch/record/v0/decoder.js') as Decode;

/** One record's body as a producer writes it, with exactly these headers. */
function record(headers: readonly (readonly [string, Buffer | null])[]): Buffer {
  const e = new EncoderClass()
    .writeInt8(0)
    .writeVarLong(0)
    .writeVarInt(0)
    .writeVarIntBytes(Buffer.from('k'))
    .writeVarIntBytes(null)
    .writeVarInt(headers.length);
  for (const [name, value] of headers) e.writeVarIntString(name).writeVarIntBytes(value);
  return e.buffer;
}

describe('kafkajs wire-order headers', () => {
  it('recovers the exact header list kafkajs folds into an object', () => {
    installWireHeaders();
    installWireHeaders(); // idempotent
    const headers = [
      ['b', Buffer.from('1')],
      ['constructor', Buffer.from('c')],
      ['a', null],
      ['b', Buffer.from('2')],
      ['__proto__', Buffer.from('p')],
      ['toString', Buffer.alloc(0)],
      ['7', Buffer.from([0, 255])],
      ['b', Buffer.from('3')],
    ] as const;
    const decoded = decodeRecord(new DecoderClass(record(headers)), {
      firstOffset: '0',
      firstTimestamp: '0',
    });
    // kafkajs's own object: order lost ("7" first), repeats grouped, and the
    // prototype's function in front of the `constructor` header.
    expect(Object.keys(decoded.headers)[0]).toBe('7');
    expect((decoded.headers['constructor'] as unknown[])[0]).toBe(Object);
    expect(wireHeaders(decoded.headers)).toEqual(headers);
    expect(Object.getPrototypeOf(decoded.headers)).toBe(Object.prototype);
  });

  it('gives no headers for a record without any, and refuses headers that bypassed the wrap', () => {
    installWireHeaders();
    const decoded = decodeRecord(new DecoderClass(record([])), {
      firstOffset: '0',
      firstTimestamp: '0',
    });
    expect(wireHeaders(decoded.headers)).toEqual([]);
    expect(wireHeaders(undefined)).toEqual([]);
    expect(() => wireHeaders({ a: Buffer.from('x') })).toThrow(/TWG_KAFKA_CLIENT_UNSUPPORTED/);
  });
});
