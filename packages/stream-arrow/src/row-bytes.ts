import { isUtf8 } from 'node:buffer';
import type { Data } from 'apache-arrow';
import { isoDate, isoTimestamp } from './iso-time.js';
import type { RowBuffer } from './row-buffer.js';

/**
 * One column of one batch, bound for rendering rows `[start, end)`: writes
 * a valid row's JSON value, and estimates the bytes of all of them (so the
 * batch's buffer is mostly allocated once).
 */
export interface BoundColumn {
  readonly write: (row: number, out: RowBuffer) => void;
  readonly estimate: number;
}

/** A column type's renderer, chosen once per schema; bound once per batch. */
export type ColumnBytes = (data: Data, start: number, end: number) => BoundColumn;

const QUOTE = 0x22;
const NULL = 'null';

export const nullBytes: ColumnBytes = (_data, start, end) => ({
  write: (_row, out) => out.ascii(NULL),
  estimate: 4 * (end - start),
});

export const boolBytes: ColumnBytes = (data, start, end) => {
  const bits = data.values as Uint8Array;
  const offset = data.offset;
  return {
    write: (row, out) => {
      const bit = offset + row;
      out.ascii(((bits[bit >> 3] ?? 0) >> (bit & 7)) & 1 ? 'true' : 'false');
    },
    estimate: 5 * (end - start),
  };
};

/** int8/16/32 and uint8/16/32: a JSON number. */
export const smallIntBytes: ColumnBytes = (data, start, end) => {
  const values = data.values as ArrayLike<number>;
  return { write: (row, out) => out.integer(values[row] ?? 0), estimate: 6 * (end - start) };
};

/** 2^21: a 64-bit value whose high word is below it in magnitude is below 2^53, exact as a number. */
const SAFE_HIGH = 0x200000;

/**
 * int64 and uint64 as a string of decimal digits. Values below 2^53 in
 * magnitude (ids, counters, most timestamps) are read as two 32-bit words
 * and written as digits without a BigInt; others by `String(bigint)`.
 */
export function wideIntBytes(signed: boolean): ColumnBytes {
  return (data, start, end) => {
    const values = data.values as BigInt64Array | BigUint64Array;
    const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
    return {
      write: (row, out) => {
        const low = (words[2 * row] ?? 0) >>> 0;
        const high = signed ? (words[2 * row + 1] ?? 0) : (words[2 * row + 1] ?? 0) >>> 0;
        out.byte(QUOTE);
        if (high < SAFE_HIGH && high >= -SAFE_HIGH) out.integer(high * 0x1_0000_0000 + low);
        else out.ascii(String(values[row]));
        out.byte(QUOTE);
      },
      estimate: 10 * (end - start),
    };
  };
}

export const floatBytes: ColumnBytes = (data, start, end) => {
  const values = data.values as Float32Array | Float64Array;
  return {
    write: (row, out) => out.ascii(float(values[row] ?? Number.NaN)),
    estimate: 20 * (end - start),
  };
};

export function float(v: number): string {
  if (Number.isFinite(v)) return Object.is(v, -0) ? '-0' : String(v);
  return Number.isNaN(v) ? '"NaN"' : v > 0 ? '"Infinity"' : '"-Infinity"';
}

export const dateBytes: ColumnBytes = (data, start, end) => {
  const values = data.values as Int32Array;
  return {
    write: (row, out) => out.ascii(`"${isoDate(values[row] ?? 0)}"`),
    estimate: 12 * (end - start),
  };
};

export function timestampBytes(unit: number, zoned: boolean): ColumnBytes {
  return (data, start, end) => {
    const values = data.values as BigInt64Array;
    return {
      write: (row, out) => out.ascii(`"${isoTimestamp(values[row] ?? 0n, unit, zoned)}"`),
      estimate: 32 * (end - start),
    };
  };
}

export const binaryBytes: ColumnBytes = (data, start, end) => {
  const { text, offsets } = varBytes(data);
  const span = (offsets[end] ?? 0) - (offsets[start] ?? 0);
  return {
    write: (row, out) => {
      out.byte(QUOTE);
      out.ascii(text.toString('base64', offsets[row], offsets[row + 1]));
      out.byte(QUOTE);
    },
    estimate: Math.ceil((Math.max(0, span) * 4) / 3) + 4 * (end - start),
  };
};

/**
 * utf8 as a JSON string. A value whose bytes are valid UTF-8 and hold no
 * `"`, `\` or control character (below 0x20) is exactly its own JSON string
 * body: its bytes are copied as they are. Whether all of the rows' bytes are
 * is checked once per batch (`verbatim`); a column that fails the check is
 * checked row by row, and a row that fails it is rendered as
 * `JSON.stringify` of its `toString('utf8')` (escapes exactly
 * JSON.stringify's, invalid UTF-8 as U+FFFD exactly as Buffer decodes it).
 */
export const utf8Bytes: ColumnBytes = (data, start, end) => {
  const { text, offsets } = varBytes(data);
  const span = (offsets[end] ?? 0) - (offsets[start] ?? 0);
  const estimate = Math.max(0, span) + 2 * (end - start);
  if (verbatim(text, offsets, start, end)) {
    return {
      write: (row, out) => {
        out.byte(QUOTE);
        out.copy(text, offsets[row] ?? 0, offsets[row + 1] ?? 0);
        out.byte(QUOTE);
      },
      estimate,
    };
  }
  return {
    write: (row, out) => {
      const from = offsets[row] ?? 0;
      const to = offsets[row + 1] ?? 0;
      if (
        from <= to &&
        to <= text.length &&
        plain(text, from, to) &&
        isUtf8(text.subarray(from, to))
      ) {
        out.byte(QUOTE);
        out.copy(text, from, to);
        out.byte(QUOTE);
      } else {
        out.utf8(JSON.stringify(text.toString('utf8', from, to)));
      }
    },
    estimate,
  };
};

/**
 * Whether every row of `[start, end)` can be copied as it is: the offsets
 * rise and lie in the buffer, no value starts on a UTF-8 continuation byte
 * (each is decoded alone), the bytes are valid UTF-8, and none of them is
 * `"`, `\` or below 0x20. The two quotes are found by the native `indexOf`;
 * control characters by a scan of 32-bit words.
 */
function verbatim(text: Buffer, offsets: Int32Array, start: number, end: number): boolean {
  const first = offsets[start] ?? 0;
  const last = offsets[end] ?? 0;
  if (first < 0 || last > text.length || first > last) return false;
  for (let row = start + 1; row < end; row++) {
    const at = offsets[row] ?? 0;
    if (at < (offsets[row - 1] ?? 0) || at > last) return false;
    if (at < last && ((text[at] ?? 0) & 0xc0) === 0x80) return false;
  }
  const range = text.subarray(first, last);
  if (range.indexOf(QUOTE) >= 0 || range.indexOf(0x5c) >= 0) return false;
  return noControl(text, first, last) && isUtf8(range);
}

/** No `"`, `\` or byte below 0x20 in `text[from, to)`: the check for one row. */
function plain(text: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = text[i] ?? 0;
    if (b < 0x20 || b === QUOTE || b === 0x5c) return false;
  }
  return true;
}

/**
 * No byte below 0x20 in `text[from, to)`, 32-bit words at a time. For each
 * byte b of a word, `(b & 0x60) + 0x60` has bit 7 set unless bits 5 and 6
 * are clear (it never carries into the next byte); or-ed with b, bit 7 is
 * clear exactly when b < 0x20. So the inverted word has a bit 7 set exactly
 * for those bytes.
 */
function noControl(text: Buffer, from: number, to: number): boolean {
  // Words start at a multiple of 4 in the ArrayBuffer; the ends are scanned bytewise.
  const base = text.byteOffset;
  let head = from;
  while (head < to && (base + head) % 4 !== 0) if ((text[head++] ?? 0) < 0x20) return false;
  const count = Math.max(0, (to - head) >> 2);
  if (count > 0) {
    const words = new Int32Array(text.buffer, base + head, count);
    let seen = 0;
    for (let i = 0; i < count; i++) {
      const w = words[i] ?? 0;
      seen |= ~(((w & 0x60606060) + 0x60606060) | w);
    }
    if ((seen & 0x80808080) !== 0) return false;
  }
  for (let i = head + 4 * count; i < to; i++) if ((text[i] ?? 0) < 0x20) return false;
  return true;
}

function varBytes(data: Data): { text: Buffer; offsets: Int32Array } {
  const values = data.values as Uint8Array;
  return {
    text: Buffer.from(values.buffer, values.byteOffset, values.byteLength),
    offsets: data.valueOffsets as Int32Array,
  };
}
