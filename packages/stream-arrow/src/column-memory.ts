/**
 * Where a batch's column buffers come from. `freshMemory` allocates each
 * one, so the batch owns its buffers. `ScratchMemory` hands out views of
 * one arena that the next build reuses. It is only for a batch that is
 * encoded and dropped before the next build (`BatchBuilder.encodeRows`).
 * Every typed array it hands out is zeroed, so a build's bytes never
 * depend on the build before it.
 */
export interface ColumnMemory {
  bytes(n: number): Uint8Array;
  int32(n: number): Int32Array;
  bigInt64(n: number): BigInt64Array;
  float64(n: number): Float64Array;
  /** At least `n` bytes to write into and grow by copying; the contents are undefined. */
  growable(n: number): Buffer;
  /** The `used` bytes of a growable buffer as a column's data: a copy, or the view itself. */
  keep(buffer: Buffer, used: number): Uint8Array;
}

export const freshMemory: ColumnMemory = {
  bytes: (n) => new Uint8Array(n),
  int32: (n) => new Int32Array(n),
  bigInt64: (n) => new BigInt64Array(n),
  float64: (n) => new Float64Array(n),
  growable: (n) => Buffer.allocUnsafe(n),
  // A copy of exactly the bytes written, so the batch does not pin the over-allocated buffer.
  keep: (buffer, used) => new Uint8Array(buffer.subarray(0, used)),
};

/** An arena larger than this is not kept for the next build. */
const MAX_ARENA_BYTES = 256 * 1024 * 1024;

/**
 * One arena reused by every build: `reset()` starts a build, then each
 * buffer is the next 8-byte-aligned region of the arena. A build that needs
 * more than the arena holds gets fresh buffers for the rest, and the next
 * `reset()` sizes the arena to what that build needed. Memory that a build
 * touched once is warm for the next: no page faults, and no external
 * memory for the collector to account for, per batch.
 */
export class ScratchMemory implements ColumnMemory {
  private arena = new ArrayBuffer(0);
  private used = 0;

  /** Starts a build: every view handed out before may be overwritten from here on. */
  reset(): void {
    const needed = this.used;
    this.used = 0;
    if (needed > this.arena.byteLength && needed <= MAX_ARENA_BYTES) {
      this.arena = new ArrayBuffer(needed);
    } else if (needed > MAX_ARENA_BYTES) {
      this.arena = new ArrayBuffer(0);
    }
  }

  /** The arena's size now, in bytes. */
  get arenaBytes(): number {
    return this.arena.byteLength;
  }

  bytes(n: number): Uint8Array {
    const { buffer, offset } = this.region(n);
    return new Uint8Array(buffer, offset, n).fill(0);
  }

  int32(n: number): Int32Array {
    const { buffer, offset } = this.region(n * 4);
    return new Int32Array(buffer, offset, n).fill(0);
  }

  bigInt64(n: number): BigInt64Array {
    const { buffer, offset } = this.region(n * 8);
    return new BigInt64Array(buffer, offset, n).fill(0n);
  }

  float64(n: number): Float64Array {
    const { buffer, offset } = this.region(n * 8);
    return new Float64Array(buffer, offset, n).fill(0);
  }

  growable(n: number): Buffer {
    const { buffer, offset } = this.region(n);
    return Buffer.from(buffer, offset, n);
  }

  keep(buffer: Buffer, used: number): Uint8Array {
    return buffer.subarray(0, used);
  }

  /**
   * The next region, 8-byte aligned and never adjacent to the one before:
   * apache-arrow's writer joins chunks that are contiguous views of one
   * buffer, and a gap keeps each column buffer a chunk of its own.
   */
  private region(bytes: number): { buffer: ArrayBuffer; offset: number } {
    const offset = Math.ceil(this.used / 8) * 8 + (this.used === 0 ? 0 : 8);
    this.used = offset + bytes;
    if (this.used <= this.arena.byteLength) return { buffer: this.arena, offset };
    return { buffer: new ArrayBuffer(bytes), offset: 0 };
  }
}
