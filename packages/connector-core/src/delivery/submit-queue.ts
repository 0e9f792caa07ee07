import { DeliveryError } from '../errors.js';

/** Anything queued: its cost in bytes. */
export interface Sized {
  readonly bytes: number;
}

/** How much a queue holds at most: batches and bytes, both. */
export interface QueueBounds {
  readonly maxItems: number;
  readonly maxBytes: number;
  /**
   * Until when an item counts against the bounds: until `take` (the
   * default), or until its taker `release`s it (a sink whose taken items
   * stay in memory until they are durable, such as raw's writer thread).
   */
  readonly countUntil?: 'taken' | 'released';
}

interface Waiter<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * The ordered, bounded queue between a sink's `submit` and what makes its
 * batches durable, bounded by items AND bytes. A push that does not fit
 * waits: that wait is the sink's backpressure. Pushes are admitted strictly
 * in call order (a small batch never overtakes a large one waiting for
 * room), because the order of admission is the order of confirmation. An
 * item larger than the byte bound is admitted alone into an empty queue
 * rather than never.
 *
 * `offer` is the non-waiting entry of a lane that sheds instead of pushing
 * back (the pipeline's secondary lanes). `end` stops nothing already pushed
 * or waiting; `fail` refuses every waiting and future push and drops what is
 * queued, which is never confirmed.
 */
export class SubmitQueue<T extends Sized> {
  /** Admitted items from `head` on; slots before it are taken, and emptied (see takeReady). */
  private items: (T | undefined)[] = [];
  private head = 0;
  private queuedBytes = 0;
  private readonly waiting: Waiter<T>[] = [];
  private taker: (() => void) | null = null;
  private ended = false;
  private failure: Error | null = null;
  private admittedCount = 0;
  /** Taken and not yet released (`countUntil: 'released'`). */
  private heldItems = 0;
  private heldBytes = 0;

  constructor(readonly bounds: QueueBounds) {
    if (!Number.isSafeInteger(bounds.maxItems) || bounds.maxItems < 1) {
      throw new RangeError('maxItems must be a positive integer');
    }
    if (!(bounds.maxBytes > 0)) throw new RangeError('maxBytes must be positive');
  }

  /** Resolves once the item is admitted (in call order); rejects after `fail` or `end`. */
  push(item: T): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.reject(ended());
    if (this.waiting.length === 0 && this.fits(item.bytes)) {
      this.admit(item);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ item, resolve, reject }));
  }

  /** Admits the item only if it fits now and nothing waits before it; never waits. */
  offer(item: T): boolean {
    if (!this.admits(item.bytes)) return false;
    this.admit(item);
    return true;
  }

  /** Whether `offer` would admit an item of `bytes` now (to skip preparing one it would refuse). */
  admits(bytes: number): boolean {
    if (this.failure !== null || this.ended || this.waiting.length > 0) return false;
    return this.fits(bytes);
  }

  /**
   * Waits for at least one item, then takes items from the head while they
   * fit `maxItems` and `maxBytes` (always at least one); null once ended and
   * empty, or failed.
   */
  async take(maxItems = Infinity, maxBytes = Infinity): Promise<T[] | null> {
    while (this.depth === 0) {
      if (this.failure !== null) return null;
      // Pushes still waiting for room count as queued for an ending queue.
      if (this.ended && this.waiting.length === 0) return null;
      await new Promise<void>((resolve) => (this.taker = resolve));
    }
    if (this.failure !== null) return null;
    return this.takeReady(maxItems, maxBytes, true);
  }

  /**
   * Takes from the head, without waiting, the items that fit `maxItems` and
   * `maxBytes` (with `atLeastOne`, the head even if it alone is larger);
   * none once failed.
   */
  takeReady(maxItems = Infinity, maxBytes = Infinity, atLeastOne = false): T[] {
    if (this.failure !== null || (maxItems < 1 && !atLeastOne)) return [];
    let end = this.head;
    let bytes = 0;
    while (end < this.items.length) {
      const item = this.items[end] as T;
      const count = end - this.head;
      if (count >= maxItems || bytes + item.bytes > maxBytes) {
        if (count > 0 || !atLeastOne) break;
      }
      bytes += item.bytes;
      end++;
    }
    const taken = this.items.slice(this.head, end) as T[];
    // The taken slots let go of their items now: the array is compacted
    // only now and then, and until then a slot would keep a taken batch
    // (its records, its rows) alive long after its taker was done with it.
    this.items.fill(undefined, this.head, end);
    this.head = end;
    this.compact();
    this.queuedBytes -= bytes;
    if (this.bounds.countUntil === 'released') {
      this.heldItems += taken.length;
      this.heldBytes += bytes;
    }
    this.admitWaiting();
    return taken;
  }

  /** Taken items of `bytes` in all no longer count against the bounds (`countUntil: 'released'`). */
  release(items: number, bytes: number): void {
    if (this.bounds.countUntil !== 'released') return;
    this.heldItems = Math.max(0, this.heldItems - items);
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
    if (this.failure === null) this.admitWaiting();
  }

  /** Takes everything queued at once, without waiting (what a shedding lane drops). */
  drain(): T[] {
    const taken = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    this.queuedBytes = 0;
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
    this.head = 0;
    this.queuedBytes = 0;
    this.heldItems = 0;
    this.heldBytes = 0;
    this.wakeTaker();
  }

  /** Items admitted since creation. */
  get admitted(): number {
    return this.admittedCount;
  }

  /** Items admitted plus pushes still waiting for room: every item handed to `push` and not refused. */
  get offered(): number {
    return this.admittedCount + this.waiting.length;
  }

  /** What counts against the bounds (held items included), and the pushes waiting for room. */
  get size(): { readonly items: number; readonly bytes: number; readonly waiting: number } {
    return {
      items: this.depth + this.heldItems,
      bytes: this.queuedBytes + this.heldBytes,
      waiting: this.waiting.length,
    };
  }

  /** How full the queue is, 0..1 (the larger of the item and byte fills). */
  fill(): number {
    const { items, bytes } = this.size;
    return Math.max(items / this.bounds.maxItems, bytes / this.bounds.maxBytes);
  }

  get failed(): Error | null {
    return this.failure;
  }

  private get depth(): number {
    return this.items.length - this.head;
  }

  private fits(bytes: number): boolean {
    const items = this.depth + this.heldItems;
    if (items === 0) return true;
    return (
      items < this.bounds.maxItems &&
      this.queuedBytes + this.heldBytes + bytes <= this.bounds.maxBytes
    );
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
      if (head === undefined || !this.fits(head.item.bytes)) return;
      this.waiting.shift();
      this.admit(head.item);
      head.resolve();
    }
  }

  /** Taking one at a time from a long queue stays O(1): the taken head is cut off now and then. */
  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  private wakeTaker(): void {
    const wake = this.taker;
    this.taker = null;
    wake?.();
  }
}

function ended(): DeliveryError {
  return new DeliveryError(
    'TWG_DELIVERY_ENDED',
    'the submit queue has ended: nothing more is taken',
  );
}
