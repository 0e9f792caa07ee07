/** Pooled buffers are sized in steps of this, with room to spare, so similar batches reuse them. */
const STEP = 64 * 1024;
/** An idle buffer no batch took for this long is dropped (default). */
const IDLE_MS = 10_000;

export interface BufferPoolOptions {
  /** An idle buffer is dropped once no batch took it for this long. Default 10 s. */
  readonly idleMs?: number;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  readonly now?: () => number;
  /**
   * Runs `trim` later, so a pool nobody takes from still shrinks; the default
   * is an unref'd `setTimeout` (an idle pool must not keep the process alive).
   */
  readonly schedule?: (run: () => void, ms: number) => void;
}

interface Idle {
  readonly buffer: ArrayBuffer;
  /** When it was given back. */
  readonly since: number;
}

/**
 * Reused ArrayBuffers for a batch's bytes: raw's packed batches (given back
 * once the segment holding them is written) and a Kafka fetch's record
 * bytes (given back once decoded into columns). Allocating one per batch
 * costs more than filling it: buffers of more than ~128 KiB are mmapped, so
 * every allocation pays page faults, and the external memory it adds
 * drives garbage collections. The next batch of a similar size takes a
 * buffer given back.
 *
 * A reused buffer holds old bytes: its user writes every byte it reads
 * (raw's packer writes offsets from 0 and a zeroed validity bitmap, and
 * Arrow's IPC writer copies only those ranges). The pool keeps at most
 * `maxBytes` idle; beyond it, buffers are dropped to the garbage collector.
 *
 * It also shrinks: a buffer that stayed idle for `idleMs` is dropped. Under
 * steady load the pool so converges on the working set (a burst's extra
 * buffers are not kept for good), and a user that goes quiet gives all of
 * it back, on a timer, since no take or give comes to trim it then.
 */
export class BufferPool {
  private readonly free: Idle[] = [];
  private freeBytes = 0;
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly schedule: (run: () => void, ms: number) => void;
  private armed = false;

  constructor(
    private readonly maxBytes: number,
    options: BufferPoolOptions = {},
  ) {
    this.idleMs = options.idleMs ?? IDLE_MS;
    this.now = options.now ?? (() => performance.now());
    this.schedule =
      options.schedule ??
      ((run, ms) => {
        setTimeout(run, ms).unref();
      });
  }

  /**
   * A buffer of at least `size` bytes, of unspecified content. An idle one
   * is taken only if it is at most about twice `size`: its holder is
   * counted by the bytes it fills (a queue's bound, a budget), so a small
   * batch must not pin a large buffer.
   */
  take(size: number): ArrayBuffer {
    this.trim();
    const free = this.free;
    const most = 2 * size + STEP;
    for (let i = free.length - 1; i >= 0; i--) {
      const idle = free[i] as Idle;
      if (idle.buffer.byteLength < size || idle.buffer.byteLength > most) continue;
      free[i] = free[free.length - 1] as Idle;
      free.pop();
      this.freeBytes -= idle.buffer.byteLength;
      return idle.buffer;
    }
    return new ArrayBuffer(Math.ceil((size + size / 8) / STEP) * STEP);
  }

  /** Gives a buffer back; a detached one (transferred away) or one beyond the bound is dropped. */
  give(buffer: ArrayBuffer): void {
    this.trim();
    const size = buffer.byteLength;
    if (size === 0 || this.freeBytes + size > this.maxBytes) return;
    this.free.push({ buffer, since: this.now() });
    this.freeBytes += size;
    this.arm();
  }

  /** Drops every buffer idle for `idleMs` or more; returns the bytes dropped. */
  trim(): number {
    const now = this.now();
    let dropped = 0;
    let kept = 0;
    for (const idle of this.free) {
      if (now - idle.since >= this.idleMs) dropped += idle.buffer.byteLength;
      else this.free[kept++] = idle;
    }
    this.free.length = kept;
    this.freeBytes -= dropped;
    return dropped;
  }

  get idleBytes(): number {
    return this.freeBytes;
  }

  get idleBuffers(): number {
    return this.free.length;
  }

  /** One pending trim while anything is idle: at the oldest buffer's expiry. */
  private arm(): void {
    if (this.armed) return;
    const oldest = this.free.reduce((t, idle) => Math.min(t, idle.since), Infinity);
    if (oldest === Infinity) return;
    this.armed = true;
    this.schedule(
      () => {
        this.armed = false;
        this.trim();
        this.arm();
      },
      Math.max(1, oldest + this.idleMs - this.now()),
    );
  }
}
