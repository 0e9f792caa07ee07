import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RecordIdHasher, recordIdHex, recordId, RECORD_ID_BYTES } from '../src/record-id.js';
import { ThalwegError } from '../src/errors.js';

// Vectors computed independently of this code, with Python's hashlib over the
// layout documented in src/record-id.ts and docs/adr/0003-record-id.md. They
// pin the layout: a change that alters any of them breaks every stored id.
const VECTORS = [
  {
    cluster: 'kafka-prod',
    topic: 'orders',
    partition: 0,
    offset: 0,
    payload: '',
    id: 'a85819ee4333d35fe363b1ff91d539e9',
  },
  {
    cluster: 'kafka-prod',
    topic: 'orders',
    partition: 0,
    offset: 1,
    payload: '',
    id: '5d582cdfd504e346a5edabd778c13185',
  },
  {
    cluster: 'kafka-prod',
    topic: 'orders',
    partition: 1,
    offset: 0,
    payload: '',
    id: 'af4220ccd300d235e2505b2924cb6877',
  },
  {
    cluster: 'kafka-prod',
    topic: 'orders',
    partition: 3,
    offset: 42,
    payload: '{"id":1}',
    id: 'a9e4492b4f33e3a73f89e2eace44eefc',
  },
  {
    cluster: 'cluster-ü',
    topic: 'topic.名前',
    partition: 7,
    offset: 4294967296,
    payload: 'héllo',
    id: '653c984c71be5a07a3d8d5dca9456f6f',
  },
  // Length prefixes keep ("a","bc") and ("ab","c") apart.
  {
    cluster: 'a',
    topic: 'bc',
    partition: 0,
    offset: 0,
    payload: 'x',
    id: '40cb95c57eb5d4fe3886196cb089d839',
  },
  {
    cluster: 'ab',
    topic: 'c',
    partition: 0,
    offset: 0,
    payload: 'x',
    id: 'e0872be7609ba1cc8f2980a09c99f28e',
  },
] as const;

describe('record id', () => {
  it.each(VECTORS)('matches the vector for $cluster/$topic/$partition@$offset', (v) => {
    const payload = Buffer.from(v.payload, 'utf8');
    expect(recordIdHex({ ...v, payload })).toBe(v.id);
  });

  it('matches the vector at the largest partition and safe offset with binary payload', () => {
    const payload = Uint8Array.from({ length: 256 }, (_, i) => i);
    const id = recordIdHex({
      cluster: 'c1',
      topic: 't',
      partition: 2147483647,
      offset: Number.MAX_SAFE_INTEGER,
      payload,
    });
    expect(id).toBe('4c365fda48b79758c8a412dc0194411f');
  });

  it('is 16 bytes and the hasher agrees with the one-shot function', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.maxSafeNat(),
        fc.uint8Array({ maxLength: 512 }),
        (cluster, topic, partition, offset, payload) => {
          const one = recordId({ cluster, topic, partition, offset, payload });
          const hasher = new RecordIdHasher(cluster, topic, partition);
          expect(one.length).toBe(RECORD_ID_BYTES);
          expect(hasher.id(offset, payload).equals(one)).toBe(true);
        },
      ),
    );
  });

  it('writes the same id, hex or raw, into a buffer at any place, for small and large payloads', () => {
    // The documented layout, hashed here independently of the hasher.
    const reference = (topic: string, partition: number, offset: number, payload: Uint8Array) => {
      const head = Buffer.alloc(8 + 2 + 2 + 2 + Buffer.byteLength(topic) + 4 + 8 + 8);
      let at = head.write('twg.rid1', 0, 'ascii');
      at = head.writeUInt16BE(2, at);
      at += head.write('c1', at);
      at = head.writeUInt16BE(Buffer.byteLength(topic), at);
      at += head.write(topic, at);
      at = head.writeUInt32BE(partition, at);
      at = head.writeBigUInt64BE(BigInt(offset), at);
      head.writeBigUInt64BE(BigInt(payload.byteLength), at);
      return createHash('sha256').update(head).update(payload).digest().subarray(0, 16);
    };
    const big = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 251);
    for (const payload of [
      new Uint8Array(0),
      big.subarray(0, 300),
      big.subarray(0, 16 * 1024),
      big,
    ]) {
      const hasher = new RecordIdHasher('c1', 't', 3);
      const want = reference('t', 3, 2 ** 40 + 5, payload);
      const out = Buffer.alloc(3 + 2 * RECORD_ID_BYTES);
      hasher.writeId(2 ** 40 + 5, payload, 'hex', out, 3);
      expect(out.subarray(3).toString('latin1')).toBe(want.toString('hex'));
      hasher.writeId(2 ** 40 + 5, payload, 'binary', out, 1);
      expect(out.subarray(1, 17).equals(want)).toBe(true);
      expect(hasher.id(2 ** 40 + 5, payload).equals(want)).toBe(true);
    }
  });

  it('changes when any input changes', () => {
    const base = { cluster: 'k', topic: 't', partition: 1, offset: 10, payload: Buffer.from('p') };
    const ids = new Set([
      recordIdHex(base),
      recordIdHex({ ...base, cluster: 'k2' }),
      recordIdHex({ ...base, topic: 't2' }),
      recordIdHex({ ...base, partition: 2 }),
      recordIdHex({ ...base, offset: 11 }),
      recordIdHex({ ...base, payload: Buffer.from('q') }),
    ]);
    expect(ids.size).toBe(6);
  });

  it('does not depend on the payload buffer being reused by the caller', () => {
    const hasher = new RecordIdHasher('k', 't', 0);
    const buf = Buffer.from('first');
    const a = hasher.hex(0, buf);
    buf.write('other');
    expect(hasher.hex(0, Buffer.from('first'))).toBe(a);
  });

  it.each([
    [{ cluster: '', topic: 't', partition: 0, offset: 0 }, 'cluster'],
    [{ cluster: 'k', topic: '', partition: 0, offset: 0 }, 'topic'],
    [{ cluster: 'k', topic: 't', partition: -1, offset: 0 }, 'partition'],
    [{ cluster: 'k', topic: 't', partition: 0, offset: -1 }, 'offset'],
    [{ cluster: 'k', topic: 't', partition: 0, offset: 2 ** 53 }, 'offset'],
    [{ cluster: 'k', topic: 't', partition: 0, offset: 1.5 }, 'offset'],
    [{ cluster: 'x'.repeat(70_000), topic: 't', partition: 0, offset: 0 }, 'cluster'],
  ])('refuses bad input %# naming the field', (input, field) => {
    const run = () => recordId({ ...input, payload: new Uint8Array() });
    expect(run).toThrow(ThalwegError);
    expect(run).toThrow(new RegExp(`${field}:`));
  });

  it('refuses names with a lone surrogate: UTF-8 would give two names the same ids', () => {
    // Both encode to "t" U+FFFD in UTF-8, so they would share every record id.
    for (const topic of ['t\uD800', 't\uDBFF']) {
      const run = () =>
        recordId({ cluster: 'k', topic, partition: 0, offset: 0, payload: new Uint8Array() });
      expect(run).toThrow(/TWG_RECORD_ID_INPUT_INVALID: topic:/);
    }
    expect(() => new RecordIdHasher('k\uDC00', 't', 0)).toThrow(/cluster:/);
    // A well-formed pair is one code point and stays accepted.
    expect(
      recordIdHex({
        cluster: 'k',
        topic: 't\u{1F600}',
        partition: 0,
        offset: 0,
        payload: new Uint8Array(),
      }),
    ).toMatch(/^[0-9a-f]{32}$/);
  });
});
