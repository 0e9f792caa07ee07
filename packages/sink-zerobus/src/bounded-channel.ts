/**
 * A bounded queue between one stream's submit path and its ack lane. A full
 * channel makes `push` wait: that wait is the sink's backpressure. The lane
 * takes bursts: it waits for one item, then takes everything already there.
 * Closing it (the lane died) fails every waiting and future push with the
 * reason, which is how a submit learns its stream is stale.
 */
export class BoundedChannel<T> {
  private items: T[] = [];
  private closedWith: Error | null = null;
  private readonly spaceWaiters: (() => void)[] = [];
  private itemWaiter: (() => void) | null = null;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
  }

  async push(item: T): Promise<void> {
    while (this.items.length >= this.capacity && this.closedWith === null) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    if (this.closedWith !== null) throw this.closedWith;
    this.items.push(item);
    this.itemWaiter?.();
    this.itemWaiter = null;
  }

  /** Waits for at least one item and returns all that are ready; null once closed and empty. */
  async takeBurst(): Promise<T[] | null> {
    while (this.items.length === 0) {
      if (this.closedWith !== null) return null;
      await new Promise<void>((resolve) => (this.itemWaiter = resolve));
    }
    const burst = this.items;
    this.items = [];
    for (const wake of this.spaceWaiters.splice(0)) wake();
    return burst;
  }

  close(reason: Error): void {
    if (this.closedWith !== null) return;
    this.closedWith = reason;
    for (const wake of this.spaceWaiters.splice(0)) wake();
    this.itemWaiter?.();
    this.itemWaiter = null;
  }

  get size(): number {
    return this.items.length;
  }

  get closed(): boolean {
    return this.closedWith !== null;
  }
}
