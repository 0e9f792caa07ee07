/** A monotonically increasing count of one fact. */
export class Counter {
  private n = 0;

  inc(by = 1): void {
    if (by < 0) throw new RangeError('a counter only goes up');
    this.n += by;
  }

  get value(): number {
    return this.n;
  }
}

/** A value that goes up and down (a depth, a backlog). */
export class Gauge {
  private v = 0;

  set(value: number): void {
    this.v = value;
  }

  get value(): number {
    return this.v;
  }
}
