/**
 * The single partition's pause switch. `pass` resolves at once while
 * running; while paused it waits for `resume`, for the signal to abort, or
 * for `release` (close), and tells which: the iterator stops on the last two.
 */
export class PauseGate {
  private paused = false;
  private wake: (() => void)[] = [];

  get isPaused(): boolean {
    return this.paused;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.release();
  }

  /** Wakes every waiter; each re-checks why it waited. */
  release(): void {
    const wake = this.wake;
    this.wake = [];
    for (const w of wake) w();
  }

  /** True to go on; false when `signal` aborted or `stopped()` holds. */
  async pass(signal: AbortSignal, stopped: () => boolean): Promise<boolean> {
    while (this.paused && !signal.aborted && !stopped()) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        signal.addEventListener('abort', done, { once: true });
        this.wake.push(done);
      });
    }
    return !signal.aborted && !stopped();
  }
}
