import { NULL_LENGTH } from './headers-codec.js';

/** A binary column's i32 offsets cap each column, the headers' too. */
export const MAX_COLUMN_BYTES = 0x7fffffff;
/** `write`'s answer for a list the codec cannot encode (not pairs, a lone surrogate in a name). */
export const HEADERS_UNENCODABLE = -1;
/** `write`'s answer when the column would pass MAX_COLUMN_BYTES. */
export const HEADERS_TOO_LARGE = -2;

/** With the u flag a surrogate pair is one code point, so this matches only unpaired ones. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Header names seen and their encoded prefixes; cleared when full (names repeat in practice). */
const HEADER_NAME_CACHE = 4096;

/**
 * Writes record after record of headers in the codec's encoding
 * (headers-codec.ts) into one scratch buffer it reuses, with no allocation
 * per record: a header name is encoded once, then cached. Raw's packer and
 * the columns a source writes (columns-writer.ts) both encode with it, so
 * both give the same bytes.
 */
export class HeaderEncoder {
  private readonly names = new Map<string, Uint8Array>();
  private scratch = new Uint8Array(16 * 1024);
  private end = 0;
  /** Name and value bytes written since `reset`: what a receipt reports for headers. */
  payload = 0;

  reset(): void {
    this.end = 0;
    this.payload = 0;
  }

  /** The bytes written since `reset` (a view of the scratch, valid until the next write). */
  written(): Uint8Array {
    return this.scratch.subarray(0, this.end);
  }

  /**
   * Appends one record's headers (and its tombstone mark); returns the end
   * of what is written so far, or HEADERS_UNENCODABLE / HEADERS_TOO_LARGE
   * (nothing of this record is kept then). The list is checked as it is
   * written, so a caller that accepts anything may pass what it was given.
   * Small copies are byte loops: for a few bytes a loop beats the fixed
   * cost of TypedArray#set.
   */
  write(headers: readonly unknown[], tombstone: boolean): number {
    const start = this.end;
    const payload = this.payload;
    let pos = start;
    if (tombstone) {
      if (!this.room(pos + 4)) return HEADERS_TOO_LARGE;
      this.writeLength(pos, NULL_LENGTH);
      pos += 4;
    }
    const count = headers.length;
    for (let h = 0; h < count; h++) {
      const entry = headers[h];
      const prefix = this.entryPrefix(entry);
      if (prefix === null) return this.undo(start, payload, HEADERS_UNENCODABLE);
      // Lengths in locals: a typed array's byteLength in a loop condition is
      // a getter call per iteration (measured: 150 ns a header).
      const prefixLength = prefix.byteLength;
      const bytes = (entry as readonly unknown[])[1] as Uint8Array | null;
      const valueLength = bytes === null ? 0 : bytes.byteLength;
      const end = pos + prefixLength + 4 + valueLength;
      if (!this.room(end)) return this.undo(start, payload, HEADERS_TOO_LARGE);
      const out = this.scratch;
      for (let i = 0; i < prefixLength; i++) out[pos + i] = prefix[i] ?? 0;
      pos += prefixLength;
      this.writeLength(pos, bytes === null ? NULL_LENGTH : valueLength);
      pos += 4;
      if (bytes !== null) {
        if (valueLength > 32) out.set(bytes, pos);
        else for (let i = 0; i < valueLength; i++) out[pos + i] = bytes[i] ?? 0;
      }
      pos += valueLength;
      this.payload += prefixLength - 4 + valueLength;
    }
    this.end = pos;
    return pos;
  }

  /**
   * The bytes `write` would add for one record's headers, or
   * HEADERS_UNENCODABLE, checked the same way, with nothing written.
   */
  size(headers: readonly unknown[], tombstone: boolean): number {
    let size = tombstone ? 4 : 0;
    for (const entry of headers) {
      const prefix = this.entryPrefix(entry);
      if (prefix === null) return HEADERS_UNENCODABLE;
      const value = (entry as readonly unknown[])[1] as Uint8Array | null;
      size += prefix.byteLength + 4 + (value === null ? 0 : value.byteLength);
    }
    return size;
  }

  /** A header entry's encoded name prefix, or null when it is no [string, Uint8Array | null] pair UTF-8 can encode. */
  private entryPrefix(entry: unknown): Uint8Array | null {
    if (!Array.isArray(entry)) return null;
    const pair = entry as readonly unknown[];
    const name = pair[0];
    const value = pair[1];
    return pair.length === 2 &&
      typeof name === 'string' &&
      (value === null || value instanceof Uint8Array)
      ? this.prefix(name)
      : null;
  }

  private undo(end: number, payload: number, answer: number): number {
    this.end = end;
    this.payload = payload;
    return answer;
  }

  /** A u32 big-endian at `pos` of the scratch (which has room for it). */
  private writeLength(pos: number, n: number): void {
    const out = this.scratch;
    out[pos] = n >>> 24;
    out[pos + 1] = n >>> 16;
    out[pos + 2] = n >>> 8;
    out[pos + 3] = n;
  }

  /** Grows the scratch to hold `needed` bytes; false past MAX_COLUMN_BYTES. */
  private room(needed: number): boolean {
    if (needed <= this.scratch.byteLength) return true;
    if (needed > MAX_COLUMN_BYTES) return false;
    const grown = new Uint8Array(
      Math.min(MAX_COLUMN_BYTES, Math.max(needed, 2 * this.scratch.byteLength)),
    );
    grown.set(this.scratch);
    this.scratch = grown;
    return true;
  }

  /**
   * A header name's encoding as the codec starts an entry with it (u32 BE
   * length, then UTF-8), or null when UTF-8 cannot encode it (a lone
   * surrogate).
   */
  private prefix(name: string): Uint8Array | null {
    const known = this.names.get(name);
    if (known !== undefined) return known;
    if (LONE_SURROGATE.test(name)) return null;
    const utf8 = Buffer.from(name, 'utf8');
    const prefix = Buffer.allocUnsafeSlow(4 + utf8.byteLength);
    prefix.writeUInt32BE(utf8.byteLength, 0);
    utf8.copy(prefix, 4);
    if (this.names.size >= HEADER_NAME_CACHE) this.names.clear();
    this.names.set(name, prefix);
    return prefix;
  }
}
