import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsedInput } from '../../src/dedup/content-hash.js';
import { FieldScanner } from '../../src/dedup/field-scan.js';

const FIELDS = ['orderId', 'eventTime'];
const utf8 = new TextEncoder();
const text = new TextDecoder();

/** The scanner's input for a value as text, or its verdict. */
function scanned(value: Uint8Array, fields = FIELDS): string {
  const out = new Uint8Array(value.byteLength + fields.length + 1);
  const r = new FieldScanner(fields).scan(value, out);
  return typeof r === 'number' ? text.decode(out.subarray(0, r)) : r;
}

/** The scanner agrees with `JSON.parse` wherever it answers. */
function agrees(value: Uint8Array, fields = FIELDS): void {
  const s = scanned(value, fields);
  if (s === 'parse') return;
  expect(s === 'none' ? null : s, text.decode(value)).toBe(parsedInput(fields, value));
}

// JSON values, shaped so the declared fields appear often, with every kind
// of text the scanner must decline or copy: escapes, non-ASCII, exponents,
// -0, long integers, nesting, white space, duplicate keys.
const scalar = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('a"b', 'a\\b', '\u0000', '\u007f', '\ud800', 'é'),
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, 1e21, 2 ** 53, 123456789012345, 1234567890123456),
  fc.boolean(),
  fc.constant(null),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS, 'pad'), fc.string()), tie('value'), {
    maxKeys: 5,
  }),
})).value;
const spaced = (s: string, ws: string): string =>
  s.replace(/([{}[\],:])/g, (m) => `${ws}${m}${ws}`);

describe('FieldScanner', () => {
  it('reads the declared fields of a plain record straight off its bytes', () => {
    const v = utf8.encode('{"orderId":"3-17","pad":"xxxx","eventTime":17}');
    expect(scanned(v)).toBe('["3-17",17]');
    expect(scanned(utf8.encode(' {"eventTime" : -5 ,\n"orderId":true}\t'))).toBe('[true,-5]');
    expect(scanned(utf8.encode('{"orderId":null,"eventTime":0,"x":{"a":[1,{"b":[]}]}}'))).toBe(
      '[null,0]',
    );
    // The last of a repeated key, as JSON.parse keeps.
    expect(scanned(utf8.encode('{"orderId":"a","eventTime":1,"orderId":"b"}'))).toBe('["b",1]');
  });

  it('says there is no key where JSON.parse would find none', () => {
    for (const v of [
      '{"orderId":"a"}',
      '[1,2]',
      '"orderId"',
      '',
      '{"orderId":"a","eventTime":1',
      '{"orderId":"a","eventTime":1}x',
      '{"orderId":"a","eventTime":01}',
      '{"orderId":"a\u0001","eventTime":1}',
      '{"orderId":"a","eventTime":1,}',
      '{"orderId":"\\x","eventTime":1}',
      '{"orderId":"a","eventTime":1,"x":[1,]}',
      '{"orderId":"a","eventTime":1,"x":{"a" 1}}',
      '{"orderId":"a","eventTime":tru}',
      '{"orderId":"a","eventTime":1.}',
      '{"orderId":"a","eventTime":-}',
    ]) {
      expect(scanned(utf8.encode(v)), v).toBe('none');
      expect(parsedInput(FIELDS, utf8.encode(v)), v).toBeNull();
    }
  });

  it('hands to JSON.parse what it cannot copy exactly', () => {
    for (const v of [
      '{"orderId":"a\\u0041","eventTime":1}',
      '{"orderId":"é","eventTime":1}',
      '{"orderId":"a","eventTime":1e3}',
      '{"orderId":"a","eventTime":-0}',
      '{"orderId":"a","eventTime":1.50}',
      '{"orderId":"a","eventTime":1234567890123456}',
      '{"orderId":{"b":1, "a":2},"eventTime":1}',
      '{"order\\u0049d":"a","eventTime":1}',
      '{"orderId":"a","eventTime":1,"\\u00e9":1}',
      '\ufeff{"orderId":"a","eventTime":1}',
      `{"orderId":"a","eventTime":1,"deep":${'['.repeat(300)}${']'.repeat(300)}}`,
    ]) {
      expect(scanned(utf8.encode(v)), v).toBe('parse');
      expect(parsedInput(FIELDS, utf8.encode(v)), v).not.toBeNull();
    }
  });

  it('leaves non-ASCII and broken UTF-8 outside the declared fields to the decoder, as the parse path does', () => {
    const v = Buffer.concat([
      utf8.encode('{"orderId":"a","eventTime":1,"pad":"'),
      Buffer.from([0xe2, 0x22]), // a cut-off sequence: the quote still closes the string
      utf8.encode(',"é":"ø"}'),
    ]);
    // The cut-off sequence leaves `"pad":"\xE2"` then `,"é":"ø"}`: valid once decoded.
    agrees(v);
    expect(scanned(v)).toBe('["a",1]');
  });

  it('agrees with JSON.parse on every generated document, spaced and broken', () => {
    fc.assert(
      fc.property(
        json,
        fc.constantFrom('', ' ', '\n\t', '\r '),
        fc.nat(),
        fc.integer({ min: 0, max: 3 }),
        (doc, ws, at, cut) => {
          const whole = spaced(JSON.stringify(doc), ws);
          agrees(utf8.encode(whole));
          // One byte removed, or the text cut short: mostly not JSON any more.
          const i = at % Math.max(1, whole.length);
          agrees(utf8.encode(whole.slice(0, i) + whole.slice(i + 1)));
          agrees(utf8.encode(whole.slice(0, Math.max(0, whole.length - cut))));
        },
      ),
      { numRuns: 3000, seed: 20261202 },
    );
  });

  it('copies, not parses, the records a stream of plain JSON carries', () => {
    let copied = 0;
    fc.assert(
      fc.property(
        fc.stringMatching(/^[ -!#-[\]-~]{0,24}$/),
        fc.integer({ min: -(10 ** 15) + 1, max: 10 ** 15 - 1 }),
        fc.string(),
        (orderId, eventTime, pad) => {
          const v = utf8.encode(JSON.stringify({ pad, orderId, eventTime }));
          agrees(v);
          if (scanned(v) !== 'parse') copied++;
        },
      ),
      { numRuns: 1000, seed: 7 },
    );
    expect(copied).toBe(1000);
  });
});
