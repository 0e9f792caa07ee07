import {
  AckLane,
  backoffDelay,
  events,
  formatSpan,
  retrying,
  sleep,
  type Confirm,
  type ConfirmTarget,
  type Lane,
  type OffsetSpan,
  type RetryPolicy,
  type SinkId,
} from '@thalweg/connector-core';
import { StreamWatermarks } from '@thalweg/stream-arrow';
import { sendThenWait } from './burst-step.js';
import { ZerobusSinkError } from './errors.js';
import { checkStreamSchema } from './stream-batch-check.js';
import type { PendingConfirm } from './pending-confirm.js';
import { StreamMetrics } from './stream-metrics.js';
import type { StreamSpec, TransportFactory, ZerobusTransport } from './transport.js';

export interface StreamOptions<L extends Lane> {
  readonly sink: SinkId;
  readonly name: string;
  /** The stream's index in its sink's pool, as telemetry labels it. */
  readonly stream: string;
  /** Read when a stream is opened: the schema can come from the catalog after construction. */
  readonly spec: () => StreamSpec;
  readonly factory: TransportFactory;
  readonly target: ConfirmTarget<L>;
  readonly channelCapacity: number;
  readonly retry: RetryPolicy;
  readonly rebuild: RetryPolicy;
  readonly onConfirmFailure: (error: unknown) => void;
  /** A poisoned stream is being replaced: the attempt in a row (1, 2, …) and what killed it. */
  readonly onRebuild?: (attempt: number, cause: ZerobusSinkError | null) => void;
  /** The metrics of the stream this one replaces in the pool (after a schema change), so they carry on. */
  readonly metrics?: StreamMetrics;
}

interface Incarnation<L extends Lane> {
  readonly transport: ZerobusTransport;
  readonly lane: AckLane<number, L, PendingConfirm<L>>;
  readonly watermarks: StreamWatermarks;
  /** The offset this transport gave each batch it accepted, by seq, until the batch settles. */
  readonly offsets: Map<number, number>;
  /** The lane's run: resolves once stopped and drained, rejects with what ended it. */
  readonly running: Promise<void>;
  failure: ZerobusSinkError | null;
}

/**
 * One Zerobus stream of a sink's pool, with its own ack lane (the delivery
 * layer's: its bounded queue is the stream's channel), watermarks and
 * metrics. A submit queues the batch on the lane (its position is the
 * batch's seq); the lane's durable step sends a burst to the transport and
 * then places ONE `waitForOffset` on the last offset sent (sendThenWait):
 * acknowledgement is cumulative, and the binding holds the stream's lock
 * while it waits, so batches submitted meanwhile stay queued on the lane
 * (never stalled in a locked binding call) and the next wait covers them
 * all. Sends and waits alternate on one stream, in seq order, so offsets
 * ascend with submission (the SDK can hand out offsets out of call order to
 * concurrent calls). When the lane dies
 * of a permanent failure the stream is stale: the next submit (or flush)
 * opens a replacement within a bounded budget and replays, in order, every
 * batch not yet confirmed — the duplicates that can cause are absorbed by
 * record-id dedup; a lost batch could not be.
 */
export class ZerobusStream<L extends Lane> {
  readonly metrics: StreamMetrics;
  private current: Incarnation<L> | null = null;
  private chain: Promise<void> = Promise.resolve();
  /** Accepted, not yet confirmed, by submission order; replayed after a rebuild. */
  private readonly unconfirmed = new Map<number, PendingConfirm<L>>();
  private nextSeq = 0;
  private fatal: ZerobusSinkError | null = null;
  private rebuildsInARow = 0;
  /** Set once close() retires the stream: a lane it stops is not rebuilt. */
  private closing = false;
  /** Flushes waiting for every batch below `upTo` (by seq) to be confirmed. */
  private drained: { readonly upTo: number; readonly wake: () => void }[] = [];
  /** The recovery under way, shared by every caller: one replacement at a time. */
  private recovering: Promise<Incarnation<L>> | null = null;

  constructor(private readonly options: StreamOptions<L>) {
    this.metrics =
      options.metrics ?? new StreamMetrics({ table: options.spec().table, stream: options.name });
  }

  /**
   * Resolves once the batch is queued on the stream's lane (waits while the
   * lane is full: the backpressure). The lane sends it with its next burst;
   * a batch the transport then refuses (poison-batch) is settled through the
   * target's `setAside` (a secondary's), or ends the stream otherwise.
   */
  submit(ipc: Uint8Array, span: OffsetSpan, confirm: Confirm<L>, records: number): Promise<void> {
    try {
      // Refused now, as the binding would refuse it later, with no seq used.
      checkStreamSchema(this.options.spec(), ipc);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const seq = this.nextSeq++;
    const step = this.chain.then(() => this.submitInOrder(seq, ipc, span, confirm, records));
    this.chain = step.catch(() => undefined);
    return step;
  }

  /** Resolves once every batch submitted before the call is confirmed (rebuilding if needed). */
  async flush(): Promise<void> {
    const upTo = this.nextSeq;
    await this.chain;
    while (this.owes(upTo)) {
      const inc = await this.healthy();
      if (!this.owes(upTo)) break;
      await Promise.race([
        new Promise<void>((wake) => this.drained.push({ upTo, wake })),
        inc.running.catch(() => undefined),
      ]);
    }
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      this.closing = true;
      const inc = this.current;
      this.current = null;
      if (inc !== null) {
        await inc.lane.stop(new ZerobusSinkError('poison-stream', 'stream closed'));
        await inc.running.catch(() => undefined);
        await inc.transport.close().catch(() => undefined);
      }
    }
  }

  get watermarks(): StreamWatermarks | null {
    return this.current?.watermarks ?? null;
  }

  get unconfirmedCount(): number {
    return this.unconfirmed.size;
  }

  private async submitInOrder(
    seq: number,
    ipc: Uint8Array,
    span: OffsetSpan,
    confirm: Confirm<L>,
    records: number,
  ): Promise<void> {
    const entry: PendingConfirm<L> = {
      seq,
      position: seq,
      confirm,
      span,
      records,
      bytes: ipc.byteLength,
      ipc,
      submittedAt: Date.now(),
    };
    const inc = await this.healthy();
    this.metrics.submittedBatches.inc();
    this.metrics.submittedRecords.inc(records);
    // Owed from here on: a lane that dies before it confirms this batch is
    // replaced, and the replacement replays it.
    this.unconfirmed.set(seq, entry);
    try {
      await inc.lane.submit(entry);
    } catch {
      // The lane died (of whatever class) while we waited for room: the
      // entry is owed and replayed, so for the caller it is accepted.
      await this.healthy();
    }
  }

  /**
   * The live incarnation, opening (and replaying into) a new one if the last
   * died. Concurrent callers (submit chain, flushes, close) share one
   * recovery, and none gets the replacement before its replay is complete.
   */
  private healthy(): Promise<Incarnation<L>> {
    const live = this.current;
    if (this.recovering === null && this.fatal === null && live !== null && live.failure === null)
      return Promise.resolve(live);
    this.recovering ??= this.recover().finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }

  private async recover(): Promise<Incarnation<L>> {
    for (;;) {
      if (this.fatal !== null) throw this.fatal;
      const dead = this.current;
      if (dead !== null && dead.failure === null) return dead;
      if (dead !== null) {
        if (this.rebuildsInARow >= this.options.rebuild.maxAttempts) {
          this.fatal = new ZerobusSinkError(
            'fatal-config',
            `stream ${this.options.name} of ${this.options.spec().table} could not be rebuilt within ${this.options.rebuild.maxAttempts} attempts`,
            dead.failure ?? undefined,
          );
          throw this.fatal;
        }
        this.rebuildsInARow += 1;
        this.metrics.rebuilds.inc();
        this.options.onRebuild?.(this.rebuildsInARow, dead.failure);
        if (events.streamRebuilt.active) {
          const cause = dead.failure?.message ?? 'unknown';
          events.streamRebuilt.publish({
            sink: this.options.sink,
            stream: this.options.stream,
            cause,
          });
        }
        await sleep(backoffDelay(this.options.rebuild, this.rebuildsInARow));
        await dead.transport.close().catch(() => undefined);
      }
      let inc: Incarnation<L>;
      try {
        inc = await this.open();
      } catch (error) {
        // open() records a fatal-config failure itself; anything else is retried.
        const fatal = this.fatalFailure();
        if (fatal !== null) throw fatal;
        // Opening failed (transient): it counts against the same rebuild budget,
        // once (a rebuild has already counted, and will back off, this attempt).
        if (dead === null) this.rebuildsInARow += 1;
        if (this.rebuildsInARow >= this.options.rebuild.maxAttempts) {
          this.fatal = new ZerobusSinkError(
            'fatal-config',
            `stream ${this.options.name} of ${this.options.spec().table} could not be opened`,
            error,
          );
          throw this.fatal;
        }
        if (dead === null) await sleep(backoffDelay(this.options.rebuild, this.rebuildsInARow));
        continue;
      }
      // Entries stay in `unconfirmed` while they are replayed (queued on the
      // new lane, which sends them as bursts), so a flush never sees an owed
      // batch as gone. One the old lane confirmed meanwhile is skipped.
      const replay = [...this.unconfirmed.values()].sort((a, b) => a.seq - b.seq);
      try {
        for (const p of replay) if (this.unconfirmed.has(p.seq)) await inc.lane.submit(p);
        return inc;
      } catch (error) {
        const fatal = this.fatalFailure();
        if (fatal !== null) throw fatal;
        // Whatever was not handed over is still owed. A replacement missing
        // some of them is no replacement: retire it and try again (budgeted).
        this.markStale(inc, error);
      }
    }
  }

  private async open(): Promise<Incarnation<L>> {
    let transport: ZerobusTransport;
    try {
      transport = await this.options.factory.open(this.options.spec());
    } catch (error) {
      const failure = error instanceof ZerobusSinkError ? error.failure : 'transient';
      if (failure === 'fatal-config') this.fatal = asError(error);
      throw error;
    }
    const watermarks = new StreamWatermarks();
    const offsets = new Map<number, number>();
    const lane = new AckLane<number, L, PendingConfirm<L>>({
      sink: this.options.sink,
      stream: this.options.stream,
      durability: 'server-ack',
      target: this.options.target,
      queue: { maxItems: this.options.channelCapacity, maxBytes: Number.POSITIVE_INFINITY },
      // A burst, grown by what queues while it is sent, stays within one channel.
      burst: { maxItems: this.options.channelCapacity },
      metrics: this.metrics,
      onSettled: (p) => {
        const offset = offsets.get(p.seq);
        offsets.delete(p.seq);
        if (offset !== undefined) watermarks.delivered(offset);
        // Once per batch: an old lane confirming a batch also replayed is not counted twice.
        if (this.unconfirmed.delete(p.seq)) {
          this.metrics.deliveredBatches.inc();
          this.metrics.deliveredRecords.inc(p.records);
        }
        this.rebuildsInARow = 0;
        this.wakeFlushes();
      },
      onConfirmFailure: (e) => this.options.onConfirmFailure(e),
    });
    const inc: Incarnation<L> = {
      transport,
      lane,
      watermarks,
      offsets,
      running: Promise.resolve(),
      failure: null,
    };
    // Transient failures are retried on the same stream; a send that
    // outlasts its retries, and anything else but a refused batch, ends the
    // lane (the stream is stale, its replacement replays what it owed).
    const retry = { transient, onRetry: () => this.metrics.retries.inc() };
    const run = lane.run((burst, ctx) =>
      sendThenWait(burst, ctx, {
        send: async (p) => {
          const offset = await retrying(
            this.options.retry,
            () => transport.submit(p.ipc),
            retry,
          ).catch((error: unknown) => {
            if (!transient(error)) throw error;
            // Retries exhausted on this batch alone: the stream was not harmed,
            // the batch is set aside (a secondary's) or the lane ends (raw).
            throw new ZerobusSinkError(
              'transient',
              `${formatSpan(p.span)} was not accepted through ${this.options.retry.maxAttempts} attempts: ${error instanceof Error ? error.message : String(error)}`,
              error,
              'batch',
            );
          });
          watermarks.submitted(offset);
          offsets.set(p.seq, offset);
          return offset;
        },
        wait: (offset) =>
          retrying(this.options.retry, () => transport.waitForOffset(offset), retry),
        canSetAside: this.options.target.setAside !== undefined,
        maxBurst: this.options.channelCapacity,
      }),
    );
    (inc as { running: Promise<void> }).running = run.catch((error: unknown) => {
      // A fatal-config failure that kills a live incarnation stays failed (no
      // rebuild); one from a lane already retired is only the echo of closing it.
      const fatal = error instanceof ZerobusSinkError && error.failure === 'fatal-config';
      if (fatal && inc.failure === null) this.fatal ??= error;
      this.markStale(inc, error);
      // The stream died waiting, perhaps on the last batch anyone submits:
      // rebuild now and replay what it owes, rather than on the next submit
      // or flush, which may never come (a source that ended, a quiet topic).
      if (!this.closing && inc === this.current && this.unconfirmed.size > 0) {
        this.healthy().catch(() => undefined);
      }
      throw error;
    });
    inc.running.catch(() => undefined);
    this.current = inc;
    return inc;
  }

  private fatalFailure(): ZerobusSinkError | null {
    return this.fatal;
  }

  /** Whether a batch submitted before seq `upTo` is still unconfirmed. */
  private owes(upTo: number): boolean {
    for (const seq of this.unconfirmed.keys()) if (seq < upTo) return true;
    return false;
  }

  private wakeFlushes(): void {
    if (this.drained.length === 0) return;
    let lowest = Number.POSITIVE_INFINITY;
    for (const seq of this.unconfirmed.keys()) lowest = Math.min(lowest, seq);
    const waiting = this.drained;
    this.drained = [];
    for (const w of waiting) {
      if (w.upTo <= lowest) w.wake();
      else this.drained.push(w);
    }
  }

  private markStale(inc: Incarnation<L>, error: unknown): void {
    if (inc.failure !== null) return;
    inc.failure =
      error instanceof ZerobusSinkError
        ? error
        : new ZerobusSinkError('poison-stream', 'ack lane failed', error);
    // Counted once as poisoned by the lane (a lane already ended by its own
    // failure has counted it).
    void inc.lane.fail(inc.failure);
    for (const { wake } of this.drained.splice(0)) wake();
  }
}

function transient(error: unknown): boolean {
  return error instanceof ZerobusSinkError && error.failure === 'transient';
}

function asError(error: unknown): ZerobusSinkError {
  return error instanceof ZerobusSinkError
    ? error
    : new ZerobusSinkError('fatal-config', String(error), error);
}
