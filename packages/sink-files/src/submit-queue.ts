/** Anything queued: its cost in bytes. */
export interface Sized {
  readonly bytes: number;
}

interface Waiter<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * The queue between `submit` and the writer, bounded by batches and by
 * bytes. A push that does not fit waits: that wait is the sink's
 * backpressure. Pushes are admitted strictly in call order (a small batch
 * never overtakes a large one waiting for room), because the order of
 * admission is the order of confirmation. A batch larger than the byte bound
 * is admitted alone into an empty queue rather than never.
 */
export class SubmitQueue<T extends Sized> {
  private items: T[] = [];
  private queuedBytes = 0;
  private readonly waiting: Waiter<T>[] = [];
  private takeWaiter: (() => void) | null = null;
  private ended = false;
  private failure: Error | null = null;
  /** Items admitted since creation: the ticket flush waits for. */
  private admittedCount = 0;

  constructor(
    private readonly maxItems: number,
    private readonly maxBytes: number,
  ) {}

  push(item: T): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.waiting.length === 0 && this.fits(item)) {
      this.admit(item);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ item, resolve, reject }));
  }

  /**
   * Waits for at least one item, then takes items from the head while they
   * fit `maxItems` and `maxBytes` (always at least one); null once ended and
   * empty, or failed.
   */
  async take(maxItems: number, maxBytes: number): Promise<T[] | null> {
    while (this.items.length === 0) {
      if (this.failure !== null) return null;
      // Admitted-but-waiting pushes count as queued for an ending queue.
      if (this.ended && this.waiting.length === 0) return null;
      await new Promise<void>((resolve) => (this.takeWaiter = resolve));
    }
    let count = 0;
    let bytes = 0;
    for (const item of this.items) {
      if (count > 0 && (count >= maxItems || bytes + item.bytes > maxBytes)) break;
      count++;
      bytes += item.bytes;
    }
    const taken = this.items.splice(0, count);
    this.queuedBytes -= bytes;
    this.admitWaiting();
    return taken;
  }

  /** No further pushes are expected; `take` returns null once the queue drains. */
  end(): void {
    this.ended = true;
    this.wakeTaker();
  }

  /** Rejects every waiting and future push with `error`; queued items are dropped. */
  fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    for (const w of this.waiting.splice(0)) w.reject(error);
    this.items = [];
    this.queuedBytes = 0;
    this.wakeTaker();
  }

  get admitted(): number {
    return this.admittedCount;
  }

  get size(): { readonly items: number; readonly bytes: number; readonly waiting: number } {
    return { items: this.items.length, bytes: this.queuedBytes, waiting: this.waiting.length };
  }

  private fits(item: T): boolean {
    if (this.items.length === 0) return true;
    return this.items.length < this.maxItems && this.queuedBytes + item.bytes <= this.maxBytes;
  }

  private admit(item: T): void {
    this.items.push(item);
    this.queuedBytes += item.bytes;
    this.admittedCount++;
    this.wakeTaker();
  }

  private admitWaiting(): void {
    for (;;) {
      const head = this.waiting[0];
      if (head === undefined || !this.fits(head.item)) return;
      this.waiting.shift();
      this.admit(head.item);
      head.resolve();
    }
  }

  private wakeTaker(): void {
    const wake = this.takeWaiter;
    this.takeWaiter = null;
    wake?.();
  }
}
