import { describe, expect, it } from 'vitest';
import {
  ackFrame,
  MalformedFrame,
  nackFrame,
  parseFrame,
  permitFrame,
} from '../../src/ws-message.js';

/** A consumer frame as Pulsar 4.0.7's WebSocket API writes it (blueprints/pulsar-client-evaluation.md). */
const FRAME = {
  messageId: 'CBQQADAA',
  payload: Buffer.from([0, 255, 1, 128]).toString('base64'),
  properties: { zeta: 'last?', ä: 'ünï', '': '' },
  publishTime: '2026-12-01T10:11:47.29Z',
  redeliveryCount: 2,
  encryptionContext: null,
  key: 'k1',
  eventTime: '2026-12-01T10:11:12.345Z',
};

function message(frame: object) {
  const parsed = parseFrame(JSON.stringify(frame));
  if (parsed.kind !== 'message') throw new Error('not a message');
  return parsed.message;
}

describe('parseFrame', () => {
  it('maps every field: bytes, pairs, milliseconds, the key', () => {
    const m = message(FRAME);
    expect(m.messageId).toBe('CBQQADAA');
    expect(m.payload).toBeInstanceOf(Uint8Array);
    expect([...m.payload]).toEqual([0, 255, 1, 128]);
    expect(m.properties).toEqual([
      ['zeta', 'last?'],
      ['ä', 'ünï'],
      ['', ''],
    ]);
    expect(m.publishTime).toBe(Date.UTC(2026, 11, 1, 10, 11, 47, 290));
    expect(m.eventTime).toBe(Date.UTC(2026, 11, 1, 10, 11, 12, 345));
    expect(m.key).toBe('k1');
    expect(m.redeliveryCount).toBe(2);
  });

  it('keeps integer-like property names where the broker put them (JSON.parse would move them first)', () => {
    const text =
      '{"messageId":"CBQQADAA","payload":"","publishTime":"2026-12-01T10:11:47.29Z",' +
      '"properties":{"b":"1","10":"2","a":"3","2":"4","x\\"y":"\\u00e9"}}';
    expect(parseFrame(text)).toMatchObject({
      kind: 'message',
      message: {
        properties: [
          ['b', '1'],
          ['10', '2'],
          ['a', '3'],
          ['2', '4'],
          ['x"y', 'é'],
        ],
      },
    });
  });

  it('reads payloads of every padding, and properties without integer-like names in order', () => {
    for (const bytes of [[1], [1, 2], [1, 2, 3], [1, 2, 3, 4]]) {
      const payload = Buffer.from(bytes).toString('base64');
      expect([...message({ ...FRAME, payload }).payload]).toEqual(bytes);
    }
    const properties = { z: '1', a: '2', '01': '3', '-1': '4', '4294967295': '5' };
    expect(message({ ...FRAME, properties }).properties).toEqual(Object.entries(properties));
  });

  it('reads no key as null and an empty key as the empty string', () => {
    const noKey = { ...FRAME, key: undefined };
    expect(message(noKey).key).toBeNull();
    expect(message({ ...FRAME, key: '' }).key).toBe('');
  });

  it('reads no event time, and the epoch, as none', () => {
    const noEvent = { ...FRAME, eventTime: undefined };
    expect(message(noEvent).eventTime).toBeNull();
    expect(message({ ...FRAME, eventTime: '1970-01-01T00:00:00Z' }).eventTime).toBeNull();
  });

  it('reads an empty payload, absent properties and an absent redelivery count', () => {
    const m = message({ messageId: 'CBQQADAA', payload: '', publishTime: '2026-12-01T10:11:47Z' });
    expect(m.payload).toHaveLength(0);
    expect(m.properties).toEqual([]);
    expect(m.redeliveryCount).toBe(0);
  });

  it('passes on a frame without a messageId as another frame', () => {
    expect(parseFrame('{"endOfTopic":false}')).toEqual({
      kind: 'other',
      text: '{"endOfTopic":false}',
    });
  });

  it.each([
    ['not JSON', 'nope', /not JSON/],
    ['trailing text', '{"a":1} x', /trailing/],
    ['an array', '[1]', /not a JSON object/],
    ['a numeric messageId', JSON.stringify({ ...FRAME, messageId: 7 }), /messageId/],
    ['a messageId with a dash', JSON.stringify({ ...FRAME, messageId: 'CB-Q' }), /messageId/],
    [
      'a payload that is not base64',
      JSON.stringify({ ...FRAME, payload: 'a*b=' }),
      /payload of CBQQADAA/,
    ],
    [
      'a payload with padding inside',
      JSON.stringify({ ...FRAME, payload: 'AA=A' }),
      /payload of CBQQADAA/,
    ],
    [
      'a payload in the URL alphabet',
      JSON.stringify({ ...FRAME, payload: 'AA-_' }),
      /payload of CBQQADAA/,
    ],
    ['a payload of a ragged length', JSON.stringify({ ...FRAME, payload: 'AAA' }), /payload/],
    ['a numeric key', JSON.stringify({ ...FRAME, key: 1 }), /key of CBQQADAA/],
    [
      'a numeric property among integer-like names',
      JSON.stringify({ ...FRAME, properties: { '1': 'a', n: 2 } }),
      /property "n"/,
    ],
    ['properties as a list', JSON.stringify({ ...FRAME, properties: ['a'] }), /properties/],
    ['a numeric property', JSON.stringify({ ...FRAME, properties: { n: 1 } }), /property "n"/],
    ['no publishTime', JSON.stringify({ ...FRAME, publishTime: undefined }), /publishTime/],
    ['a bad eventTime', JSON.stringify({ ...FRAME, eventTime: 'later' }), /eventTime/],
    [
      'a negative redeliveryCount',
      JSON.stringify({ ...FRAME, redeliveryCount: -1 }),
      /redeliveryCount/,
    ],
  ])('refuses %s, naming the field', (_, text, reason) => {
    expect(() => parseFrame(text)).toThrow(MalformedFrame);
    expect(() => parseFrame(text)).toThrow(reason);
  });
});

describe('the frames sent to the broker', () => {
  it('are the shapes the WebSocket API reads', () => {
    expect(JSON.parse(ackFrame('CBQQADAA'))).toEqual({ messageId: 'CBQQADAA' });
    expect(JSON.parse(nackFrame('CBQQADAA'))).toEqual({
      type: 'negativeAcknowledge',
      messageId: 'CBQQADAA',
    });
    expect(JSON.parse(permitFrame(5))).toEqual({ type: 'permit', permitMessages: 5 });
  });
});
