import { describe, expect, it } from 'vitest';
import { PackedJson, packValues, recordJson, type SourceRecord } from '../../src/index.js';

function record(offset: number, value: Uint8Array): SourceRecord {
  return { offset, key: null, value, timestamp: 0, headers: [] };
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** What `recordJson` makes of each record: its value, or the message it throws. */
function outcome(parse: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: parse() };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function expectSameAsRecordJson(values: readonly Uint8Array[]): void {
  const records = values.map((v, i) => record(100 + i, v));
  const json = new PackedJson(packValues(records));
  records.forEach((r, i) => {
    expect(
      outcome(() => json.parse(i, r.offset)),
      `record ${i}`,
    ).toEqual(outcome(() => recordJson(r)));
  });
}

describe('PackedJson', () => {
  it('parses an all-ASCII batch as recordJson does, refusals naming the offset included', () => {
    const values = [
      text('{"n":1,"s":"a"}'),
      text('not json'),
      text(''),
      text('[1,2,{"k":null}]'),
      text('{"truncated":'),
      text('"\\u00e9 escaped"'),
    ];
    expectSameAsRecordJson(values);
    const json = new PackedJson(packValues(values.map((v, i) => record(100 + i, v))));
    expect(json.parse(0, 100)).toEqual({ n: 1, s: 'a' });
    expect(() => json.parse(1, 101)).toThrow(/^offset 101: the value is not JSON/);
  });

  it('decodes each value on its own when the batch holds a byte above ASCII', () => {
    const values = [
      text('{"name":"usér"}'),
      text('{"n":2}'),
      Uint8Array.of(0x22, 0xff, 0x22),
      text('{"emoji":"🐟"}'),
    ];
    expectSameAsRecordJson(values);
    const json = new PackedJson(packValues(values.map((v, i) => record(100 + i, v))));
    expect(json.parse(0, 100)).toEqual({ name: 'usér' });
    expect(() => json.parse(2, 102)).toThrow('offset 102: the value is not UTF-8');
  });

  it('gives the same as recordJson for seeded random batches of JSON, text and bytes', () => {
    let state = 20261207;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) >>> 0;
      return state % n;
    };
    for (let round = 0; round < 200; round++) {
      const values: Uint8Array[] = [];
      const count = 1 + next(12);
      for (let i = 0; i < count; i++) {
        const kind = next(round % 3 === 0 ? 4 : 2);
        if (kind === 0) values.push(text(JSON.stringify({ i, pad: 'x'.repeat(next(40)) })));
        else if (kind === 1) values.push(text(`{"i":${i},`.slice(0, next(8))));
        else if (kind === 2) values.push(text(JSON.stringify({ s: 'ü'.repeat(next(3)) })));
        else values.push(Uint8Array.from({ length: next(6) }, () => next(256)));
      }
      expectSameAsRecordJson(values);
    }
  });
});
