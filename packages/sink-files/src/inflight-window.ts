interface Waiter {
  readonly bytes: number;
  readonly admit: () => void;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * The bound on what the worker writer holds: batches handed to the writer
 * thread count, by number and by bytes, until it reports them durable. An
 * entry that does not fit waits: that wait is the sink's backpressure.
 * Entries are admitted strictly in call order (a small batch never
 * overtakes a large one waiting for room), and admission runs the entry's
 * `admit` synchronously, so the order batches reach the writer is the order
 * of admission, which is the order of confirmation. An entry larger than
 * the byte bound is admitted alone into an empty window rather than never.
 */
export class InflightWindow {
  private items = 0;
  private bytes = 0;
  private admittedCount = 0;
  private readonly waiting: Waiter[] = [];
  private failure: Error | null = null;

  constructor(
    private readonly maxItems: number,
    private readonly maxBytes: number,
  ) {}

  /** Runs `admit` once the entry fits; resolves then. Rejects if `admit` throws or the window failed. */
  enter(bytes: number, admit: () => void): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.admit(bytes, admit);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ bytes, admit, resolve, reject }));
  }

  /** `items` entries of `bytes` in all left the window (they are durable). */
  leave(items: number, bytes: number): void {
    this.items -= items;
    this.bytes -= bytes;
    while (this.failure === null) {
      const head = this.waiting[0];
      if (head === undefined || !this.fits(head.bytes)) return;
      this.waiting.shift();
      try {
        this.admit(head.bytes, head.admit);
        head.resolve();
      } catch (error) {
        head.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  /** Rejects every waiting and future entry with `error`. */
  fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    for (const w of this.waiting.splice(0)) w.reject(error);
  }

  /** Entries admitted since creation: the ticket flush waits for. */
  get admitted(): number {
    return this.admittedCount;
  }

  get size(): { readonly items: number; readonly bytes: number; readonly waiting: number } {
    return { items: this.items, bytes: this.bytes, waiting: this.waiting.length };
  }

  private fits(bytes: number): boolean {
    if (this.items === 0) return true;
    return this.items < this.maxItems && this.bytes + bytes <= this.maxBytes;
  }

  /** Counts the entry only once `admit` ran without throwing. */
  private admit(bytes: number, admit: () => void): void {
    admit();
    this.items++;
    this.bytes += bytes;
    this.admittedCount++;
  }
}
