/**
 * The bounded queue between `submit` and the writer. Strictly first in,
 * first out, waiting pushes included, so the order the writer commits (and
 * confirms) in is the order submit was called in. A full queue makes `push`
 * wait: that wait is the sink's backpressure.
 *
 * `end` stops nothing already pushed or waiting (a graceful close drains
 * them); `fail` refuses every waiting and future push and drops what is
 * queued, which is never confirmed.
 */
export class BatchQueue<T> {
  private items: T[] = [];
  private readonly waiting: {
    readonly item: T;
    readonly resolve: () => void;
    readonly reject: (e: Error) => void;
  }[] = [];
  private taker: (() => void) | null = null;
  private ended = false;
  private failure: Error | null = null;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError('capacity must be a positive integer');
    }
  }

  push(item: T): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.reject(new Error('the queue has ended'));
    if (this.waiting.length === 0 && this.items.length < this.capacity) {
      this.items.push(item);
      this.wakeTaker();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => this.waiting.push({ item, resolve, reject }));
  }

  /** Waits for at least one item, then takes up to `max`; null once ended and empty, or failed. */
  async take(max: number): Promise<T[] | null> {
    while (this.items.length === 0) {
      if (this.failure !== null || (this.ended && this.waiting.length === 0)) return null;
      await new Promise<void>((resolve) => (this.taker = resolve));
    }
    if (this.failure !== null) return null;
    const taken = this.items.splice(0, Math.max(1, max));
    this.admit();
    return taken;
  }

  end(): void {
    this.ended = true;
    this.wakeTaker();
  }

  fail(reason: Error): void {
    if (this.failure !== null) return;
    this.failure = reason;
    this.items = [];
    for (const w of this.waiting.splice(0)) w.reject(reason);
    this.wakeTaker();
  }

  /** Accepted and not yet taken by the writer. */
  get size(): number {
    return this.items.length;
  }

  private admit(): void {
    while (this.items.length < this.capacity) {
      const next = this.waiting.shift();
      if (next === undefined) return;
      this.items.push(next.item);
      next.resolve();
    }
  }

  private wakeTaker(): void {
    const wake = this.taker;
    this.taker = null;
    wake?.();
  }
}
