import { FlowControlError } from './flow-control-errors.js';

interface Parked {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/**
 * The flag the Critical state raises to pause the source. The source loop
 * checks `paused` before each fetch (no promise on the hot path) and parks on
 * `whenOpen()` while it is raised; resuming wakes every parked loop at once.
 */
export class SourceThrottle {
  private isPaused = false;
  private parked: Parked[] = [];

  get paused(): boolean {
    return this.isPaused;
  }

  pause(): void {
    this.isPaused = true;
  }

  resume(): void {
    if (!this.isPaused) return;
    this.isPaused = false;
    const woken = this.parked;
    this.parked = [];
    for (const p of woken) {
      p.signal?.removeEventListener('abort', p.onAbort);
      p.resolve();
    }
  }

  /** Resolves once the source may fetch again; rejects if `signal` aborts first. */
  whenOpen(signal?: AbortSignal): Promise<void> {
    if (!this.isPaused) return Promise.resolve();
    if (signal?.aborted === true) return Promise.reject(aborted(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.parked = this.parked.filter((p) => p !== entry);
        reject(aborted(signal));
      };
      const entry: Parked = { resolve, reject, signal, onAbort };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.parked.push(entry);
    });
  }
}

function aborted(signal: AbortSignal | undefined): FlowControlError {
  return new FlowControlError(
    'TWG_THROTTLE_WAIT_ABORTED',
    'the wait for the source throttle to open was aborted',
    signal?.reason,
  );
}
