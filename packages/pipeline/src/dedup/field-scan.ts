/**
 * The declared fields of a JSON value read straight off its bytes, for the
 * content hash: one pass over the value that checks the whole of it is JSON
 * (as `JSON.parse` would) and notes where each declared top-level field's
 * value lies, with no string decoded and no object made.
 *
 * It is exact or it declines. The content hash digests
 * `JSON.stringify([value of field 1, value of field 2, ...])` of the parsed
 * value (content-hash.ts), so where the bytes of a field's value are that
 * text already (an ASCII string with no escape, an integer of at most 15
 * digits other than -0, true, false, null) the scanner copies them; where
 * they might not be (an escape, a byte past ASCII, an exponent or a
 * fraction, an object or an array) it answers `'parse'` and the caller takes
 * the `JSON.parse` path. Either way a record gets the same key, so keys
 * written by one path are found by the other (a restored backup, an etcd set
 * shared between versions).
 */

/** The scanner's answer: the hash input's length in `out`, no key, or ask `JSON.parse`. */
export type ScanResult = number | 'none' | 'parse';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;

const EMPTY = new Uint8Array(0);

/** The deepest nesting scanned; deeper values go to `JSON.parse`. */
const MAX_DEPTH = 256;

/** 0 for a byte that is plain inside a string: printable ASCII other than a quote or backslash. */
const STRING_BYTE = new Uint8Array(256).map((_, b) =>
  b < 0x20 || b === QUOTE || b === BACKSLASH || b >= 0x80 ? 1 : 0,
);

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
const isHex = (b: number): boolean =>
  isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** The declared fields, encoded once for the byte compare. */
export class FieldScanner {
  private readonly names: Uint8Array[];
  private readonly asciiNames: boolean;
  /** Per field, where its value starts and ends in the last scanned value (-1: absent). */
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  /** Per field, whether its bytes are its `JSON.stringify` text. */
  private readonly plain: Uint8Array;
  private pos = 0;
  private tooDeep = false;
  private bytes: Uint8Array = EMPTY;

  constructor(fields: readonly string[]) {
    const utf8 = new TextEncoder();
    this.names = fields.map((f) => utf8.encode(f));
    this.asciiNames = this.names.every((n) => n.every((b) => b < 0x80));
    this.starts = new Int32Array(fields.length);
    this.ends = new Int32Array(fields.length);
    this.plain = new Uint8Array(fields.length);
  }

  /**
   * Scans `value`; on success writes `[v1,v2,...]` (each declared field's
   * value as `JSON.stringify` writes it) into `out` from 0 and returns its
   * length. `'none'`: the value is not a JSON object holding every declared
   * field. `'parse'`: the scanner cannot be sure; ask `JSON.parse`. `out`
   * must hold at least `value.byteLength + fields + 1` bytes.
   */
  scan(value: Uint8Array, out: Uint8Array): ScanResult {
    // A byte order mark is dropped by the decoder the parse path uses.
    if (value[0] === 0xef) return 'parse';
    this.bytes = value;
    this.pos = 0;
    this.tooDeep = false;
    this.starts.fill(-1);
    const outcome = this.document();
    this.bytes = EMPTY; // not held past the call
    if (outcome !== 'ok') return outcome;
    let at = 0;
    out[at++] = OPEN_BRACKET;
    for (let f = 0; f < this.names.length; f++) {
      const start = this.starts[f] ?? -1;
      if (start < 0) return 'none';
      if (this.plain[f] !== 1) return 'parse';
      if (f > 0) out[at++] = COMMA;
      const end = this.ends[f] ?? start;
      for (let i = start; i < end; i++) out[at++] = value[i] as number;
    }
    out[at++] = CLOSE_BRACKET;
    return at;
  }

  /** The whole value: one top-level object, with only white space around it. */
  private document(): 'ok' | 'none' | 'parse' {
    this.space();
    if (this.bytes[this.pos] !== OPEN_BRACE) {
      // Valid JSON that is not an object has no fields; invalid JSON has no key either.
      return 'none';
    }
    this.pos++;
    this.space();
    if (this.bytes[this.pos] === CLOSE_BRACE) {
      this.pos++;
    } else {
      for (;;) {
        const key = this.topKey();
        if (key === 'bad') return 'none';
        if (key === 'parse') return 'parse';
        this.space();
        if (this.bytes[this.pos] !== COLON) return 'none';
        this.pos++;
        this.space();
        const start = this.pos;
        const plain = this.value();
        // Too deep to scan is not the same as not JSON.
        if (plain === 'bad') return this.tooDeep ? 'parse' : 'none';
        if (key >= 0) {
          this.starts[key] = start;
          this.ends[key] = this.pos;
          this.plain[key] = plain === 'plain' ? 1 : 0;
        }
        this.space();
        const b = this.bytes[this.pos++];
        if (b === CLOSE_BRACE) break;
        if (b !== COMMA) return 'none';
        this.space();
      }
    }
    this.space();
    return this.pos === this.bytes.length ? 'ok' : 'none';
  }

  /** A top-level key: the declared field it names, -1 for another, or why it cannot be read. */
  private topKey(): number | 'bad' | 'parse' {
    if (this.bytes[this.pos] !== QUOTE) return 'bad';
    const start = this.pos + 1;
    const kind = this.string();
    if (kind === 'bad') return 'bad';
    // An escaped key might decode to a declared name; a key with bytes past
    // ASCII only to a name that has some.
    if (kind === 'other' || (kind === 'wide' && !this.asciiNames)) return 'parse';
    if (kind === 'wide') return -1;
    const end = this.pos - 1;
    for (let f = 0; f < this.names.length; f++) {
      const name = this.names[f] as Uint8Array;
      if (name.length !== end - start) continue;
      let same = true;
      for (let i = 0; i < name.length; i++) {
        if (this.bytes[start + i] !== name[i]) {
          same = false;
          break;
        }
      }
      if (same) return f;
    }
    return -1;
  }

  /**
   * One value from `pos`, leaving `pos` past it: 'plain' where its bytes
   * are its `JSON.stringify` text, 'other' where it is valid but might not
   * be, 'bad' where it is not JSON.
   */
  private value(): 'plain' | 'wide' | 'other' | 'bad' {
    const b = this.bytes[this.pos];
    if (b === QUOTE) return this.string();
    if (b === MINUS || (b !== undefined && isDigit(b))) return this.number();
    if (b === OPEN_BRACE || b === OPEN_BRACKET) return this.container(1) ? 'other' : 'bad';
    if (this.literal('true') || this.literal('false') || this.literal('null')) return 'plain';
    return 'bad';
  }

  /**
   * A string from its opening quote: 'plain' holds only printable ASCII and
   * no escape, 'wide' has bytes past ASCII but no escape, 'other' an escape.
   */
  private string(): 'plain' | 'wide' | 'other' | 'bad' {
    const bytes = this.bytes;
    const n = bytes.length;
    let i = this.pos + 1;
    let escaped = false;
    let wide = false;
    for (;;) {
      // Most of a value's bytes are plain string text: one table look each.
      while (i < n && STRING_BYTE[bytes[i] as number] === 0) i++;
      if (i === n) return 'bad';
      const b = bytes[i] as number;
      if (b < 0x20) return 'bad';
      if (b === QUOTE) break;
      if (b === BACKSLASH) {
        escaped = true;
        const e = bytes[i + 1];
        if (e === 0x75) {
          for (let h = 2; h < 6; h++) {
            const x = bytes[i + h];
            if (x === undefined || !isHex(x)) return 'bad';
          }
          i += 6;
          continue;
        }
        // " \ / b f n r t
        if (
          e !== QUOTE &&
          e !== BACKSLASH &&
          e !== 0x2f &&
          e !== 0x62 &&
          e !== 0x66 &&
          e !== 0x6e &&
          e !== 0x72 &&
          e !== 0x74
        ) {
          return 'bad';
        }
        i += 2;
        continue;
      }
      if (b >= 0x80) wide = true;
      i++;
    }
    this.pos = i + 1;
    return escaped ? 'other' : wide ? 'wide' : 'plain';
  }

  /** A number: 'plain' for an integer of at most 15 digits that is not -0. */
  private number(): 'plain' | 'other' | 'bad' {
    const bytes = this.bytes;
    const start = this.pos;
    let i = start;
    if (bytes[i] === MINUS) i++;
    const intStart = i;
    if (bytes[i] === 0x30) {
      i++;
    } else if (isDigit(bytes[i] ?? 0)) {
      while (isDigit(bytes[i] ?? 0)) i++;
    } else {
      return 'bad';
    }
    const digits = i - intStart;
    let integer = true;
    if (bytes[i] === 0x2e) {
      integer = false;
      i++;
      if (!isDigit(bytes[i] ?? 0)) return 'bad';
      while (isDigit(bytes[i] ?? 0)) i++;
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      integer = false;
      i++;
      if (bytes[i] === 0x2b || bytes[i] === MINUS) i++;
      if (!isDigit(bytes[i] ?? 0)) return 'bad';
      while (isDigit(bytes[i] ?? 0)) i++;
    }
    this.pos = i;
    const negativeZero = bytes[start] === MINUS && digits === 1 && bytes[intStart] === 0x30;
    return integer && digits <= 15 && !negativeZero ? 'plain' : 'other';
  }

  /**
   * An object or array and all it holds, checked; false where it is not
   * JSON, or nests deeper than MAX_DEPTH (`tooDeep` says which).
   */
  private container(depth: number): boolean {
    if (depth === MAX_DEPTH) {
      this.tooDeep = true;
      return false;
    }
    const bytes = this.bytes;
    const inObject = bytes[this.pos++] === OPEN_BRACE;
    const close = inObject ? CLOSE_BRACE : CLOSE_BRACKET;
    this.space();
    if (bytes[this.pos] === close) {
      this.pos++;
      return true;
    }
    for (;;) {
      if (inObject) {
        if (bytes[this.pos] !== QUOTE || this.string() === 'bad') return false;
        this.space();
        if (bytes[this.pos++] !== COLON) return false;
        this.space();
      }
      const b = bytes[this.pos];
      if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (!this.container(depth + 1)) return false;
      } else if (this.value() === 'bad') {
        return false;
      }
      this.space();
      const next = bytes[this.pos++];
      if (next === close) return true;
      if (next !== COMMA) return false;
      this.space();
    }
  }

  private literal(word: 'true' | 'false' | 'null'): boolean {
    for (let i = 0; i < word.length; i++) {
      if (this.bytes[this.pos + i] !== word.charCodeAt(i)) return false;
    }
    this.pos += word.length;
    return true;
  }

  private space(): void {
    while (isSpace(this.bytes[this.pos] ?? 0)) this.pos++;
  }
}
