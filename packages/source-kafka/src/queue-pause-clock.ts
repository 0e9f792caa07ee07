/**
 * How often the reader's queue bound paused a partition, and for how long
 * any partition was held by it: the time runs from the first queue pause
 * until no partition is queue-paused any more.
 */
export class QueuePauseClock {
  private pauses = 0;
  private pausedMs = 0;
  private since: number | null = null;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A partition is queue-paused; `first` when no other one was. */
  pausing(first: boolean): void {
    if (first && this.since === null) this.since = this.now();
    this.pauses += 1;
  }

  /** No partition is queue-paused any more. */
  released(): void {
    if (this.since === null) return;
    this.pausedMs += this.now() - this.since;
    this.since = null;
  }

  stats(): { readonly queuePauses: number; readonly queuePausedMs: number } {
    const running = this.since === null ? 0 : this.now() - this.since;
    return { queuePauses: this.pauses, queuePausedMs: this.pausedMs + running };
  }
}
