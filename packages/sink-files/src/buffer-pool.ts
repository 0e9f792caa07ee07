/** Pooled buffers are sized in steps of this, with room to spare, so similar batches reuse them. */
const STEP = 64 * 1024;

/**
 * Reused ArrayBuffers for packed batches. Allocating one per batch costs
 * more than packing it: buffers of more than ~128 KiB are mmapped, so every
 * allocation pays page faults and zeroing, and the external memory it adds
 * drives garbage collections. The writer hands each buffer back once the
 * segment holding its batch is written (the worker transfers it back), and
 * the next batch of a similar size takes it.
 *
 * A reused buffer holds old bytes: the packer writes every byte the
 * envelope reads (offsets from 0, a zeroed validity bitmap), and Arrow's IPC
 * writer copies only those ranges, so padding is never written to disk.
 * The pool keeps at most `maxBytes` idle; beyond it, buffers are dropped to
 * the garbage collector.
 */
export class BufferPool {
  private readonly free: ArrayBuffer[] = [];
  private freeBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** A buffer of at least `size` bytes, of unspecified content. */
  take(size: number): ArrayBuffer {
    const free = this.free;
    for (let i = free.length - 1; i >= 0; i--) {
      const buffer = free[i] as ArrayBuffer;
      if (buffer.byteLength < size) continue;
      free[i] = free[free.length - 1] as ArrayBuffer;
      free.pop();
      this.freeBytes -= buffer.byteLength;
      return buffer;
    }
    return new ArrayBuffer(Math.ceil((size + size / 8) / STEP) * STEP);
  }

  /** Gives a buffer back; a detached one (transferred away) or one beyond the bound is dropped. */
  give(buffer: ArrayBuffer): void {
    const size = buffer.byteLength;
    if (size === 0 || this.freeBytes + size > this.maxBytes) return;
    this.free.push(buffer);
    this.freeBytes += size;
  }

  get idleBytes(): number {
    return this.freeBytes;
  }
}
