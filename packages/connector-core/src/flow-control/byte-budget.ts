import type { ByteBudgetConfig } from './byte-budget-config.js';
import type { Clock } from './clock.js';
import { FlowControlError } from './flow-control-errors.js';

/**
 * The answer to a request for permits. `oversized` means the record can never
 * be granted at the current capacity: waiting for it would hold up every
 * record queued behind it, so the caller routes it to quarantine instead.
 */
export type Admission =
  | { readonly kind: 'granted' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'oversized'; readonly bytes: number; readonly grantable: number };

export type AcquireOutcome = Exclude<Admission, { readonly kind: 'wait' }>;

export interface ByteBudgetStats {
  readonly budgetBytes: number;
  /** What may be granted now: a fraction of the budget during warm-up, then all of it. */
  readonly limitBytes: number;
  readonly inFlightBytes: number;
  readonly waiters: number;
  readonly waitingBytes: number;
  /** In-flight over the current limit, 0..1. */
  readonly saturation: number;
  readonly warmingUp: boolean;
  readonly acks: number;
  readonly oversized: number;
}

interface Waiter {
  readonly bytes: number;
  readonly resolve: (outcome: AcquireOutcome) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  settled: boolean;
}

// Shared constants: the uncontended path allocates nothing.
const GRANTED: { readonly kind: 'granted' } = Object.freeze({ kind: 'granted' });
const WAIT: { readonly kind: 'wait' } = Object.freeze({ kind: 'wait' });

/**
 * A semaphore whose permits are bytes. A record takes permits for its
 * estimated expanded size when admitted and gives them back on the
 * downstream acknowledgement.
 *
 * Two ways in: `tryAcquire` answers synchronously and costs no promise, which
 * is the path taken whenever there is room; `acquire` returns a promise that
 * the pipeline races against its ack processing rather than awaiting alone.
 * Awaiting it alone deadlocks a full budget, since the acks that would
 * release permits would never be processed. A pending acquire keeps its
 * place in the queue across races and can be withdrawn with an AbortSignal.
 *
 * Grants are strictly first-come: while anyone waits, nobody jumps the queue,
 * so a large record is never starved by a stream of small ones that each fit.
 */
export class ByteBudget {
  private inFlight = 0;
  private limit: number;
  private warming: boolean;
  private readonly startedAt: number;
  private acks = 0;
  /** Bytes released as acknowledged, counted until warm-up ends. */
  private ackedBytes = 0;
  /** The limit granted during warm-up. */
  private readonly warmLimit: number;
  private oversized = 0;
  private readonly queue: Waiter[] = [];
  private head = 0;
  private liveWaiters = 0;
  private waitingBytes = 0;

  constructor(
    private readonly config: ByteBudgetConfig,
    private readonly clock: Clock,
  ) {
    this.startedAt = clock.now();
    const { fraction, acks, timeoutMs } = config.warmUp;
    this.warming = fraction < 1 && acks > 0 && timeoutMs > 0;
    this.warmLimit = Math.max(1, Math.floor(config.bytes * fraction));
    this.limit = this.warming ? this.warmLimit : config.bytes;
  }

  tryAcquire(bytes: number): Admission {
    if (this.liveWaiters === 0 && Number.isSafeInteger(bytes) && bytes > 0) {
      if (bytes <= this.limit - this.inFlight) {
        this.inFlight += bytes;
        return GRANTED;
      }
    }
    return this.tryAcquireSlow(bytes);
  }

  acquire(bytes: number, signal?: AbortSignal): Promise<AcquireOutcome> {
    // An already withdrawn request takes nothing, even if room is free.
    if (signal?.aborted === true) return Promise.reject(abortError(bytes, signal));
    let admission: Admission;
    try {
      admission = this.tryAcquire(bytes);
    } catch (error) {
      // A promise-returning method reports bad input as a rejection, never a throw.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (admission.kind !== 'wait') return Promise.resolve(admission);
    return new Promise<AcquireOutcome>((resolve, reject) => {
      const waiter: Waiter = { bytes, resolve, reject, signal, onAbort: undefined, settled: false };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          this.withdraw(waiter);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      this.liveWaiters += 1;
      this.waitingBytes += bytes;
    });
  }

  /**
   * Gives permits back. `acked` (the default) counts towards ending warm-up;
   * `abandoned` is for permits whose record will never be acknowledged (a
   * revoked partition, a shutdown) and only frees the bytes.
   */
  release(bytes: number, outcome: 'acked' | 'abandoned' = 'acked'): void {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw amountError(bytes);
    if (bytes > this.inFlight) {
      throw new FlowControlError(
        'TWG_BUDGET_OVER_RELEASE',
        `release of ${bytes} bytes with only ${this.inFlight} in flight: permits released twice ` +
          'would let the budget admit bytes that are still held',
      );
    }
    this.inFlight -= bytes;
    if (outcome === 'acked') {
      this.acks += 1;
      if (this.warming) this.ackedBytes += bytes;
    }
    if (this.warming) this.checkWarmUp();
    if (this.liveWaiters > 0) this.grantWaiters();
  }

  /**
   * Lets time act without an ack: ends warm-up on its timeout. The embedder
   * calls it on its flow-control cadence (with the backpressure evaluation);
   * nothing here schedules a timer.
   */
  tick(): void {
    if (this.warming) this.checkWarmUp();
    if (this.liveWaiters > 0) this.grantWaiters();
  }

  get saturation(): number {
    return this.inFlight / this.limit;
  }

  stats(): ByteBudgetStats {
    return {
      budgetBytes: this.config.bytes,
      limitBytes: this.limit,
      inFlightBytes: this.inFlight,
      waiters: this.liveWaiters,
      waitingBytes: this.waitingBytes,
      saturation: this.saturation,
      warmingUp: this.warming,
      acks: this.acks,
      oversized: this.oversized,
    };
  }

  private tryAcquireSlow(bytes: number): Admission {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw amountError(bytes);
    if (this.warming) this.checkWarmUp();
    // Judged against what can be granted now, not the full budget: during
    // warm-up a record that only fits the full budget would wait for an
    // expansion that may be minutes away, with everything behind it.
    if (bytes > this.limit) {
      this.oversized += 1;
      return { kind: 'oversized', bytes, grantable: this.limit };
    }
    if (this.liveWaiters === 0 && bytes <= this.limit - this.inFlight) {
      this.inFlight += bytes;
      return GRANTED;
    }
    return WAIT;
  }

  private checkWarmUp(): void {
    const { acks, timeoutMs } = this.config.warmUp;
    // A window's worth acknowledged ends it too: a count of acks stretches
    // with the batch size (a columnar batch is a whole fetch), bytes do not.
    if (
      this.acks >= acks ||
      this.ackedBytes >= this.warmLimit ||
      this.clock.now() - this.startedAt >= timeoutMs
    ) {
      this.warming = false;
      this.limit = this.config.bytes;
      // Waiters queued against the warm-up limit may fit now; grant them before
      // anyone who asks later, whichever call noticed the end of the warm-up.
      if (this.liveWaiters > 0) this.grantWaiters();
    }
  }

  private grantWaiters(): void {
    while (this.head < this.queue.length) {
      const w = this.queue[this.head];
      if (w === undefined) break;
      if (!w.settled) {
        // The head waits for room even if a later, smaller waiter would fit: fairness.
        if (w.bytes > this.limit - this.inFlight) break;
        this.settle(w);
        this.inFlight += w.bytes;
        w.resolve(GRANTED);
      }
      this.head += 1;
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private withdraw(w: Waiter): void {
    if (w.settled) return;
    this.settle(w);
    w.reject(abortError(w.bytes, w.signal));
    // The withdrawn waiter may have been the head holding smaller ones back.
    this.grantWaiters();
  }

  private settle(w: Waiter): void {
    w.settled = true;
    this.liveWaiters -= 1;
    this.waitingBytes -= w.bytes;
    if (w.onAbort !== undefined) w.signal?.removeEventListener('abort', w.onAbort);
  }
}

function amountError(bytes: number): FlowControlError {
  return new FlowControlError(
    'TWG_BUDGET_AMOUNT_INVALID',
    `bytes: expected a positive safe integer, got ${String(bytes)}`,
  );
}

function abortError(bytes: number, signal: AbortSignal | undefined): FlowControlError {
  return new FlowControlError(
    'TWG_BUDGET_ACQUIRE_ABORTED',
    `the acquisition of ${bytes} bytes was withdrawn before it was granted; nothing was taken`,
    signal?.reason,
  );
}
