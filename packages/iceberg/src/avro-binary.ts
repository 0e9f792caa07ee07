import { IcebergError } from './errors.js';

/**
 * A cursor over Avro binary encoding (the spec's "Binary Encoding"): ints and
 * longs are zigzag varints, floats and doubles little-endian IEEE 754, bytes
 * and strings a long length then the bytes. Longs are read as bigint, since
 * Iceberg's snapshot ids use all 64 bits and a double would round them.
 * Every read checks the end of the input, so a truncated file fails with the
 * file and byte offset rather than reading past the end.
 */
export class AvroCursor {
  /** The next byte to read. */
  pos: number;
  private readonly view: DataView;
  private static readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(
    readonly bytes: Uint8Array,
    /** The file these bytes come from, named in errors. */
    readonly file: string,
    /** Where `bytes[0]` sits in the file, so errors name file offsets even inside a block. */
    readonly base = 0,
    pos = 0,
  ) {
    this.pos = pos;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get atEnd(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** An error naming this file and the byte offset where the problem was found. */
  corrupt(reason: string, at = this.pos): IcebergError {
    return new IcebergError(
      'TWG_ICEBERG_AVRO_CORRUPT',
      this.file,
      `byte ${this.base + at}: ${reason}`,
    );
  }

  private need(n: number): void {
    if (n < 0 || this.pos + n > this.bytes.length) {
      throw this.corrupt(`needs ${n} more bytes, ${this.bytes.length - this.pos} left`);
    }
  }

  /** A zigzag varint of at most 10 bytes, as bigint. */
  long(): bigint {
    // fast path: up to 7 bytes (49 bits) add up exactly in a double, and most longs
    // in a manifest (counts, sizes, ids of fields) are that short
    let n = 0;
    let mul = 1;
    for (let i = this.pos; i < this.pos + 7 && i < this.bytes.length; i++) {
      const b = this.bytes[i] ?? 0;
      n += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) {
        this.pos = i + 1;
        return n % 2 === 0 ? BigInt(n / 2) : -BigInt((n + 1) / 2);
      }
      mul *= 128;
    }
    return this.longSlow();
  }

  private longSlow(): bigint {
    const start = this.pos;
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      this.need(1);
      const b = this.bytes[this.pos++] ?? 0; // need(1) checked it is there
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return (result >> 1n) ^ -(result & 1n);
      shift += 7n;
    }
    throw this.corrupt('a varint longer than 10 bytes', start);
  }

  /** A zigzag varint that must fit a 32-bit int. */
  int(): number {
    const start = this.pos;
    const v = this.long();
    if (v < -0x80000000n || v > 0x7fffffffn) throw this.corrupt(`int ${v} out of range`, start);
    return Number(v);
  }

  /** A long used as a count or length: must be a safe, non-negative or (for blocks) any small number. */
  count(): number {
    const start = this.pos;
    const v = this.long();
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw this.corrupt(`count ${v} out of range`, start);
    }
    return Number(v);
  }

  boolean(): boolean {
    this.need(1);
    const b = this.bytes[this.pos++] ?? 0; // need(1) checked it is there
    if (b > 1) throw this.corrupt(`boolean byte ${b}`, this.pos - 1);
    return b === 1;
  }

  float(): number {
    this.need(4);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  double(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** `n` raw bytes (a view into the input, not a copy). */
  fixed(n: number): Uint8Array {
    this.need(n);
    // a plain Uint8Array view even over a Buffer, so values compare alike whatever read the file
    const out = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset + this.pos, n);
    this.pos += n;
    return out;
  }

  bytesValue(): Uint8Array {
    const start = this.pos;
    const n = this.count();
    if (n < 0) throw this.corrupt(`negative length ${n}`, start);
    return this.fixed(n);
  }

  string(): string {
    const start = this.pos;
    try {
      return AvroCursor.utf8.decode(this.bytesValue());
    } catch (e) {
      if (e instanceof IcebergError) throw e;
      throw this.corrupt('a string that is not UTF-8', start);
    }
  }
}
