import { Buffer, isAscii } from 'node:buffer';
import { parseJsonText, recordJson } from '../parts/derive-context.js';
import { packedValue, type PackedValues } from './packed-values.js';

/**
 * The values of one packed batch parsed as JSON, value by value, with the
 * errors `recordJson` gives (naming the offset). When every byte of the
 * batch is ASCII, as JSON payloads mostly are, the batch is decoded to text
 * once and each value is a slice of it: one decode a batch instead of one a
 * record. Otherwise each value is decoded on its own, its UTF-8 checked.
 */
export class PackedJson {
  /** The whole batch as text, when it is all ASCII (then a byte is a character). */
  private readonly text: string | null;

  constructor(private readonly packed: PackedValues) {
    const { bytes } = packed;
    this.text = isAscii(bytes)
      ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
      : null;
  }

  /** Value `i` parsed; `offset` is the record's, for the error. */
  parse(i: number, offset: number): unknown {
    const { text, packed } = this;
    if (text === null) {
      return recordJson({
        offset,
        key: null,
        value: packedValue(packed, i),
        timestamp: 0,
        headers: [],
      });
    }
    const start = i === 0 ? 0 : (packed.ends[i - 1] ?? 0);
    return parseJsonText(text.slice(start, packed.ends[i] ?? start), offset);
  }
}
