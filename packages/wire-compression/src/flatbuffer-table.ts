import { WireCompressionError } from './errors.js';

/**
 * Just enough of the FlatBuffers binary format to read Arrow IPC message
 * metadata: a table starts with an i32 offset back to its vtable; the vtable
 * holds u16 sizes and then one u16 per field (0 = absent, read the default);
 * reference fields hold a u32 offset forward from their own position; a
 * vector is a u32 count followed by its elements.
 *
 * Every read is bounds-checked and a failure names the absolute byte offset
 * in the IPC stream (`origin` is where this flatbuffer starts in it).
 */
export class FlatTable {
  private readonly view: DataView;
  private readonly vtable: number;
  private readonly vtableSize: number;

  constructor(
    private readonly bytes: Uint8Array,
    /** Position of the table in `bytes`. */
    readonly position: number,
    private readonly origin: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.check(position, 4);
    this.vtable = position - this.view.getInt32(position, true);
    this.check(this.vtable, 4);
    this.vtableSize = this.view.getUint16(this.vtable, true);
    this.check(this.vtable, this.vtableSize);
  }

  /** The root table of a flatbuffer. */
  static root(bytes: Uint8Array, origin: number): FlatTable {
    if (bytes.byteLength < 4) {
      throw new WireCompressionError(
        'TWG_IPC_STREAM_INVALID',
        'metadata shorter than 4 bytes',
        origin,
      );
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return new FlatTable(bytes, view.getUint32(0, true), origin);
  }

  /** Absolute position of field `index` in the table, or undefined when absent. */
  fieldPosition(index: number): number | undefined {
    const slot = 4 + 2 * index;
    if (slot + 2 > this.vtableSize) return undefined;
    const offset = this.view.getUint16(this.vtable + slot, true);
    return offset === 0 ? undefined : this.position + offset;
  }

  u8(index: number, fallback: number): number {
    const at = this.fieldPosition(index);
    if (at === undefined) return fallback;
    this.check(at, 1);
    return this.view.getUint8(at);
  }

  i16(index: number, fallback: number): number {
    const at = this.fieldPosition(index);
    if (at === undefined) return fallback;
    this.check(at, 2);
    return this.view.getInt16(at, true);
  }

  /** An i64 field as a number; refuses values beyond 2^53 rather than rounding. */
  i64(index: number, fallback: number): number {
    const at = this.fieldPosition(index);
    return at === undefined ? fallback : this.i64At(at);
  }

  i64At(at: number): number {
    this.check(at, 8);
    const value = this.view.getBigInt64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail(at, `64-bit value ${value} is beyond what this reader handles exactly`);
    }
    return Number(value);
  }

  /** The position a reference field points to, or undefined when absent. */
  reference(index: number): number | undefined {
    const at = this.fieldPosition(index);
    if (at === undefined) return undefined;
    this.check(at, 4);
    const target = at + this.view.getUint32(at, true);
    this.check(target, 4);
    return target;
  }

  table(index: number): FlatTable | undefined {
    const target = this.reference(index);
    return target === undefined ? undefined : new FlatTable(this.bytes, target, this.origin);
  }

  /** A vector of fixed-size elements: where its elements start, and how many. */
  vector(index: number, elementSize: number): { start: number; count: number } | undefined {
    const target = this.reference(index);
    if (target === undefined) return undefined;
    const count = this.view.getUint32(target, true);
    this.check(target + 4, count * elementSize);
    return { start: target + 4, count };
  }

  private check(at: number, length: number): void {
    if (at < 0 || at + length > this.bytes.byteLength) {
      this.fail(
        at,
        `flatbuffer reference out of bounds (${length} bytes at ${at} of ${this.bytes.byteLength})`,
      );
    }
  }

  private fail(at: number, message: string): never {
    throw new WireCompressionError('TWG_IPC_STREAM_INVALID', message, this.origin + at);
  }
}
