import type { Confirm, ConfirmTarget, Lane, SetAsideHook } from '../confirm.js';
import type { DurableKind } from '../durability.js';
import { DeliveryError } from '../errors.js';
import { formatSpan } from '../offset-span.js';
import type { SinkId } from '../sink-id.js';
import { events } from '../telemetry/events.js';
import { publishDurable } from './lane-events.js';
import { DeliveryMetrics } from './delivery-metrics.js';
import { SubmitQueue, type QueueBounds } from './submit-queue.js';
import type {
  AnySettlement,
  BurstContext,
  DurableStep,
  Pending,
  Position,
  Settlement,
} from './burst.js';

export type {
  BurstContext,
  DurableSettlement,
  DurableStep,
  Pending,
  Position,
  SetAsideSettlement,
  Settlement,
} from './burst.js';

export interface AckLaneOptions<L extends Lane, E> {
  readonly sink: SinkId;
  /** The durability the receipts state: what the sink's step guarantees. */
  readonly durability: DurableKind;
  readonly target: ConfirmTarget<L>;
  /**
   * What the lane holds before `submit` waits (`offer` refuses). With
   * `countUntil: 'released'` a batch counts until its step made it durable,
   * not only until the lane took it.
   */
  readonly queue: QueueBounds;
  /** The most one burst takes; everything queued when absent. */
  readonly burst?: Partial<QueueBounds>;
  /** The lane's own metrics (a stream's, kept across the lanes it runs). */
  readonly metrics?: DeliveryMetrics;
  /** The stream this lane delivers for, in telemetry events; `0` when absent. */
  readonly stream?: string;
  /** A confirmation target that threw: the batch is durable, acting on it failed. */
  readonly onConfirmFailure?: (error: unknown, entry: E) => void;
  /** After each batch settled (confirmed, failed to confirm, or set aside), in order. */
  readonly onSettled?: (entry: E) => void;
}

/**
 * The one ack lane under every sink. `submit` queues a batch (bounded: a
 * full lane makes it wait); `run` drains the queue in bursts, has the sink's
 * durable step make each burst durable with ONE wait (on the largest
 * position), then applies the confirmations in ascending order while the
 * step works on the next burst, at most one burst behind. This is the only
 * place a sink's confirmations are applied, and only after its step said
 * durable; a batch the step set aside goes to the target's `setAside`
 * instead, in the same order (ADR 0025).
 *
 * A confirmation target that throws does not stop the lane: the batch IS
 * durable, only acting on it failed, so a position or coverage lags (a
 * replay later), which is safe. A step that throws ends the lane: what it
 * had handed over is still confirmed, nothing after it, and every waiting
 * and later `submit` and `flush` rejects with the failure.
 */
export class AckLane<P extends Position, L extends Lane, E extends Pending<P, L> = Pending<P, L>> {
  readonly metrics: DeliveryMetrics;
  private readonly queue: SubmitQueue<E>;
  private tail: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private running = false;
  private lastSubmitted: P | null = null;
  private lastHanded: P | null = null;
  private deliveredAt: P | null = null;
  private settledCount = 0;
  private waiters: {
    readonly upTo: number;
    readonly resolve: () => void;
    readonly reject: (e: Error) => void;
  }[] = [];

  constructor(private readonly options: AckLaneOptions<L, E>) {
    this.queue = new SubmitQueue<E>(options.queue);
    this.metrics = options.metrics ?? new DeliveryMetrics();
  }

  /** Resolves once the batch is queued (not durable); waits while the lane is full. */
  submit(entry: E): Promise<void> {
    const refused = this.refuse(entry);
    if (refused !== null) return Promise.reject(refused);
    this.lastSubmitted = entry.position;
    const admitted = this.queue.push(entry);
    this.metrics.submitted.inc();
    this.gauge();
    return admitted;
  }

  /** Queues the batch only if it fits now; false when the lane is full, ended or failed. */
  offer(entry: E): boolean {
    if (this.refuse(entry) !== null || !this.queue.offer(entry)) return false;
    this.lastSubmitted = entry.position;
    this.metrics.submitted.inc();
    this.gauge();
    return true;
  }

  /**
   * Drives the lane with the sink's durable step until `end` and drained,
   * or `fail`. Rejects with the step's failure once the lane is torn down.
   */
  async run(step: DurableStep<P, E>): Promise<void> {
    if (this.running) throw new DeliveryError('TWG_DELIVERY_ENDED', 'the lane already runs');
    this.running = true;
    const burst = this.options.burst;
    try {
      for (;;) {
        const taken = await this.queue.take(burst?.maxItems, burst?.maxBytes);
        if (taken === null) break;
        await this.deliver(taken, step);
      }
      await this.tail;
    } catch (error) {
      await this.fail(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  }

  /** Resolves once every batch submitted before the call is settled; rejects once the lane failed. */
  flush(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const upTo = this.queue.offered;
    if (this.settledCount >= upTo) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ upTo, resolve, reject }));
  }

  /** No more submits: `run` resolves once what is queued is settled. */
  end(): void {
    this.queue.end();
  }

  /**
   * Ends the lane (the first failure stands): refuses what is queued and
   * every later submit, waits for the confirmations already handed over,
   * then rejects every flush they do not cover. Counted as poisoned.
   */
  fail(error: Error): Promise<void> {
    return this.tearDown(error, true);
  }

  /**
   * Ends the lane at once, not as a failure (its owner closed it): what is
   * queued is dropped unconfirmed and waiting submits and flushes reject
   * with `reason`; a burst whose step is under way still settles.
   */
  stop(reason: Error): Promise<void> {
    return this.tearDown(reason, false);
  }

  get failed(): Error | null {
    return this.failure;
  }

  /** The largest position confirmed (or set aside) so far: the delivered watermark. */
  get delivered(): P | null {
    return this.deliveredAt;
  }

  /** Batches settled since the lane was created. */
  get settled(): number {
    return this.settledCount;
  }

  get size(): { readonly items: number; readonly bytes: number; readonly waiting: number } {
    return this.queue.size;
  }

  /** Queue fill, 0..1. */
  fill(): number {
    return this.queue.fill();
  }

  private async tearDown(error: Error, poisoned: boolean): Promise<void> {
    if (this.failure !== null) return this.tail;
    this.failure = error;
    if (poisoned) this.metrics.poisoned.inc();
    this.queue.fail(error);
    await this.tail;
    for (const w of this.waiters.splice(0)) w.reject(error);
  }

  private refuse(entry: E): Error | null {
    if (this.failure !== null) return this.failure;
    const last = this.lastSubmitted;
    if (last !== null && !(entry.position > last)) {
      return new DeliveryError(
        'TWG_DELIVERY_OUT_OF_ORDER',
        `position ${String(entry.position)} submitted after ${String(last)}: a lane's positions ascend`,
      );
    }
    return null;
  }

  private async deliver(taken: readonly E[], step: DurableStep<P, E>): Promise<void> {
    const tail = taken[taken.length - 1];
    if (tail === undefined) return;
    const burst = [...taken];
    let last = tail.position;
    let handed = 0;
    const bounds = this.options.burst;
    let bytes = 0;
    for (const e of burst) bytes += e.bytes;
    const more = (): readonly E[] => {
      if (this.failure !== null) return [];
      const room = (bounds?.maxItems ?? Infinity) - burst.length;
      const extra = this.queue.takeReady(room, (bounds?.maxBytes ?? Infinity) - bytes, false);
      for (const e of extra) {
        burst.push(e);
        bytes += e.bytes;
        last = e.position;
      }
      return extra;
    };
    const settle = (settled: readonly Settlement<E>[]): Promise<void> => {
      settled.forEach((s, i) => {
        if (s.entry !== burst[handed + i]) {
          throw new DeliveryError(
            'TWG_DELIVERY_OUT_OF_ORDER',
            `a step settled ${formatEntry(s.entry)} out of its burst's order`,
          );
        }
      });
      handed += settled.length;
      return this.handOver(settled);
    };
    const context: BurstContext<P, E> = {
      get last() {
        return last;
      },
      metrics: this.metrics,
      more,
      settle,
    };
    try {
      await step(burst, context);
    } finally {
      this.metrics.coalesce.observe(burst.length);
    }
    const durableAt = Date.now();
    // Before the confirmations it leads to (those the step settled itself went earlier).
    publishDurable(this.options.sink, this.stream, burst, durableAt);
    if (handed < burst.length) {
      await this.handOver(burst.slice(handed).map((entry) => ({ entry, at: durableAt })));
    }
  }

  /**
   * Queues the confirmations of durable batches behind those still being
   * applied. Resolves once the PREVIOUS hand-over is applied: at most one
   * waits, so a slow confirmation target slows the step instead of piling up.
   */
  private async handOver(settled: readonly AnySettlement<E>[]): Promise<void> {
    for (const { entry } of settled) {
      if (this.lastHanded !== null && !(entry.position > this.lastHanded)) {
        throw new DeliveryError(
          'TWG_DELIVERY_OUT_OF_ORDER',
          `${formatEntry(entry)} settled after position ${String(this.lastHanded)}`,
        );
      }
      this.lastHanded = entry.position;
    }
    let bytes = 0;
    for (const { entry } of settled) bytes += entry.bytes;
    this.queue.release(settled.length, bytes);
    await this.tail;
    this.tail = this.applyInOrder(settled);
  }

  private async applyInOrder(settled: readonly AnySettlement<E>[]): Promise<void> {
    for (const s of settled) {
      const entry = s.entry;
      try {
        await this.applyOne(s);
      } catch (error) {
        this.metrics.confirmFailures.inc();
        try {
          this.options.onConfirmFailure?.(error, entry);
        } catch {
          // A throwing observer (a logger) must not end the lane: the count above stands.
        }
      }
      this.deliveredAt = entry.position;
      this.settledCount++;
      this.metrics.delivered.inc();
      this.gauge();
      try {
        this.options.onSettled?.(entry);
      } catch (error) {
        // The sink's own bookkeeping failed: a defect. Stop loudly, not silently.
        void this.fail(error instanceof Error ? error : new Error(String(error)));
      }
      this.wake();
    }
  }

  /** The one call of the target for a settled batch: `apply` if durable, `setAside` if not. */
  private async applyOne(s: AnySettlement<E>): Promise<void> {
    const o = this.options;
    const entry = s.entry;
    if (s.kind === 'set-aside') {
      // Only a secondary's entries can be settled aside (Settlement), and
      // only a secondary target has the hook (SetAsideHook): the confirm is
      // a secondary's. A target without the hook leaves the span a gap.
      const hook = o.target.setAside as SetAsideHook<Lane> | undefined;
      await hook?.(entry.confirm as Confirm<'secondary'>, entry.span, s.refusal);
      return;
    }
    const confirmedAt = s.at ?? Date.now();
    const latencyMs = confirmedAt - entry.submittedAt;
    this.metrics.deliveryLatencyMs.observe(latencyMs);
    if (events.confirmed.active) {
      events.confirmed.publish({
        sink: o.sink,
        stream: this.stream,
        span: entry.span,
        records: entry.records,
        latencyMs,
      });
    }
    await o.target.apply(entry.confirm, {
      sink: o.sink,
      span: entry.span,
      durability: o.durability,
      records: entry.records,
      bytes: s.bytes ?? entry.receiptBytes ?? entry.bytes,
      submittedAt: entry.submittedAt,
      confirmedAt,
    });
  }

  private gauge(): void {
    this.metrics.pending.set(this.queue.offered - this.settledCount);
    this.metrics.saturation.set(this.queue.fill());
  }

  private get stream(): string {
    return this.options.stream ?? '0';
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      if (w.upTo <= this.settledCount) w.resolve();
      else this.waiters.push(w);
    }
  }
}

function formatEntry(entry: Pending<Position, Lane>): string {
  return `position ${String(entry.position)} (${formatSpan(entry.span)})`;
}
