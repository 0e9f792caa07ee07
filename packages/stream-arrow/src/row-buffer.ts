/** Strings and byte runs shorter than this are copied by a JS loop: a native call costs more. */
const NATIVE_FROM = 32;

/** 10^0 .. 10^15: the digit count of an integer below 2^53 is found by comparing against them. */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * One growing byte buffer that a batch's rows are rendered into, back to
 * back. Every write first makes room for the most bytes it can write, so a
 * write is never truncated; the buffer doubles when it is full.
 */
export class RowBuffer {
  bytes: Buffer;
  at = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(64, capacity));
  }

  /** Room for `n` more bytes. */
  room(n: number): void {
    if (this.at + n > this.bytes.length) this.grow(n);
  }

  byte(b: number): void {
    this.room(1);
    this.bytes[this.at++] = b;
  }

  /** `s` holds only code units below 0x80 (numbers, dates, base64, `null`): one byte each. */
  ascii(s: string): void {
    const n = s.length;
    this.room(n);
    if (n >= NATIVE_FROM) {
      this.at += this.bytes.write(s, this.at, n, 'latin1');
      return;
    }
    const bytes = this.bytes;
    let at = this.at;
    for (let i = 0; i < n; i++) bytes[at++] = s.charCodeAt(i);
    this.at = at;
  }

  /** Any string, UTF-8 encoded. */
  utf8(s: string): void {
    this.room(s.length * 3);
    this.at += this.bytes.write(s, this.at, 'utf8');
  }

  /** The bytes `from[start, end)`, as they are. */
  copy(from: Buffer, start: number, end: number): void {
    const n = end - start;
    this.room(n);
    if (n >= NATIVE_FROM) {
      // A view and TypedArray#set: Buffer#copy checks its arguments and makes the same view.
      this.bytes.set(new Uint8Array(from.buffer, from.byteOffset + start, n), this.at);
      this.at += n;
      return;
    }
    const bytes = this.bytes;
    let at = this.at;
    for (let i = start; i < end; i++) bytes[at++] = from[i] ?? 0;
    this.at = at;
  }

  /** An integer of magnitude below 2^53 in decimal digits, as `String(n)` writes it. */
  integer(n: number): void {
    this.room(17);
    const bytes = this.bytes;
    let at = this.at;
    if (n < 0) {
      bytes[at++] = 0x2d;
      n = -n;
    }
    let digits = 1;
    while (digits < 16 && n >= (POWERS_OF_TEN[digits] ?? Infinity)) digits++;
    at += digits;
    this.at = at;
    // Below 2^31 the digits are found in int32 arithmetic, which is cheaper than Math.floor.
    while (n >= 0x80000000) {
      const q = Math.floor(n / 10);
      bytes[--at] = 0x30 + (n - q * 10);
      n = q;
    }
    let small = n | 0;
    do {
      const q = (small / 10) | 0;
      bytes[--at] = 0x30 + (small - q * 10);
      small = q;
    } while (small > 0);
  }

  /**
   * The bytes written, in a buffer of their own size when the estimate left
   * more than a quarter unused: every record of the batch is a view of it,
   * so slack would be held as long as any of them.
   */
  done(): Buffer {
    if (this.at >= this.bytes.length * 0.75) return this.bytes;
    const exact = Buffer.allocUnsafe(this.at);
    this.bytes.copy(exact, 0, 0, this.at);
    return exact;
  }

  private grow(n: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.at + n));
    this.bytes.copy(next, 0, 0, this.at);
    this.bytes = next;
  }
}
