import {
  AckLane,
  type BurstContext,
  type Confirm,
  type ConfirmTarget,
  type DeliveryMetrics,
  type Lane,
  type OffsetSpan,
  type Pending,
  type Settlement,
  type SinkId,
} from '@thalweg/connector-core';
import type { RecordBatch, Schema } from 'apache-arrow';
import { FlightError } from './errors.js';
import type { FlightClient } from './flight-client.js';
import type { FlightPut } from './flight-put.js';

/** One batch written on a DoPut stream and not yet settled; its position is its `seq`. */
export interface PutEntry<L extends Lane> extends Pending<number, L> {
  readonly seq: number;
}

export interface FlightPutLaneOptions<L extends Lane> {
  readonly sink: SinkId;
  readonly client: FlightClient;
  readonly dataset: string;
  readonly schema: Schema;
  readonly target: ConfirmTarget<L>;
  /** Batches written and not yet acknowledged, at most: `submit` waits beyond it. */
  readonly maxInFlight: number;
  /** The sink's metrics, kept across the streams it opens. */
  readonly metrics: DeliveryMetrics;
  readonly onConfirmFailure: (error: unknown) => void;
}

/**
 * One DoPut stream of a dataset with its ack lane (ADR 0018). `submit`
 * writes the batch at once with app_metadata
 * `{"seq","topic","partition","start","end"}` and queues it on the lane, so
 * many batches are in flight on the one call. The lane's durable step waits
 * for the PutResults `{"seq"}` of its burst: they may come in any order, so
 * the acknowledged seqs are kept as a set and a batch is handed to the
 * confirmations only once its OWN PutResult came and every batch before it
 * was handed over (confirmations go in order; coverage is never ahead of
 * what the server made durable).
 *
 * A failure of the call (the server's error status, a lost connection, a
 * PutResult we cannot read) ends the lane loudly: what was acknowledged
 * before it is still confirmed, nothing after it, so the rest stay gaps for
 * recovery. A failed stream is never written again.
 */
export class FlightPutLane<L extends Lane> {
  readonly lane: AckLane<number, L, PutEntry<L>>;
  /** Settles when the lane is over: resolved after `close`, rejected with what ended it. */
  readonly running: Promise<void>;
  private readonly put: FlightPut;
  private readonly acked = new Set<number>();
  private nextSeq = 0;
  private failure: Error | null = null;
  private wakeStep: (() => void) | null = null;

  constructor(private readonly options: FlightPutLaneOptions<L>) {
    this.put = options.client.doPut({ type: 'path', path: [options.dataset] }, options.schema);
    this.lane = new AckLane<number, L, PutEntry<L>>({
      sink: options.sink,
      durability: 'server-ack',
      target: options.target,
      // In-flight batches count until acknowledged: the bound on the server's
      // outstanding PutResults, and on the memory they hold.
      queue: {
        maxItems: options.maxInFlight,
        maxBytes: Number.POSITIVE_INFINITY,
        countUntil: 'released',
      },
      metrics: options.metrics,
      stream: options.dataset,
      onConfirmFailure: (e) => options.onConfirmFailure(e),
    });
    this.running = this.lane.run((burst, context) => this.durable(burst, context));
    this.running.catch(() => undefined);
    void this.readResults();
  }

  /** The failure that ended this stream, or null while it is live. */
  get failed(): Error | null {
    return this.failure ?? this.lane.failed;
  }

  /**
   * Writes the batch (waiting for gRPC flow control) and queues its
   * confirmation. Resolves once both are done; rejects with the stream's
   * failure, and then the batch is not confirmed.
   */
  async submit(
    batch: RecordBatch,
    span: OffsetSpan,
    confirm: Confirm<L>,
    records: number,
    bytes: number,
  ): Promise<void> {
    const failed = this.failed;
    if (failed !== null) throw failed;
    const seq = ++this.nextSeq;
    const entry: PutEntry<L> = {
      seq,
      position: seq,
      confirm,
      span,
      records,
      bytes,
      submittedAt: Date.now(),
    };
    // Queued before it is written, so its PutResult always finds it; both
    // start in call order (the write's first frame is sent synchronously).
    const queued = this.lane.submit(entry);
    const meta = {
      seq,
      topic: span.topic,
      partition: span.partition,
      start: span.start,
      end: span.end,
    };
    const written = this.put.write(batch, new TextEncoder().encode(JSON.stringify(meta)));
    const [q, w] = await Promise.allSettled([queued, written]);
    if (w.status === 'rejected') this.fail(asError(w.reason));
    if (q.status === 'rejected') throw asError(q.reason);
    if (w.status === 'rejected') throw asError(w.reason);
  }

  /** Resolves once every batch submitted before it is confirmed; rejects once the stream failed. */
  flush(): Promise<void> {
    return this.lane.flush();
  }

  /**
   * Half-closes the call (a server may hold a PutResult until then, as our
   * test server's `reorder` holds a last odd one), waits for the PutResults
   * still owed and the server's end of the call, then ends the lane.
   * Rejects with the stream's failure when it failed meanwhile.
   */
  async close(): Promise<void> {
    this.put.end();
    this.lane.end();
    if (this.failed !== null) {
      await this.running.catch(() => undefined);
      return;
    }
    await this.running;
    await this.put.done;
  }

  /** Ends the stream: nothing more is written, nothing unacknowledged is confirmed. */
  fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    void this.lane.fail(error);
    this.wake();
  }

  private async readResults(): Promise<void> {
    try {
      for await (const body of this.put.results) {
        const seq = seqOf(body, this.options.dataset);
        if (seq < 1 || seq > this.nextSeq) {
          throw new FlightError(
            'TWG_FLIGHT_PUT_RESULT_INVALID',
            `a PutResult for seq ${seq}, but only seqs 1..${this.nextSeq} were written`,
            { call: `DoPut path ${this.options.dataset}` },
          );
        }
        this.acked.add(seq);
        this.wake();
      }
    } catch (error) {
      this.fail(asError(error));
    }
  }

  /**
   * The lane's durable step: hands the burst over batch by batch, in order,
   * as each one's own PutResult has come; throws once the stream failed.
   */
  private async durable(
    burst: readonly PutEntry<L>[],
    context: BurstContext<number, PutEntry<L>>,
  ): Promise<void> {
    let next = 0;
    for (;;) {
      let ready = next;
      while (ready < burst.length && this.acked.has(burst[ready]?.seq ?? -1)) ready++;
      if (ready > next) {
        const handed = burst.slice(next, ready);
        for (const e of handed) this.acked.delete(e.seq);
        next = ready;
        // A durable settlement is valid on either lane; the conditional type
        // cannot see that through the generic L.
        await context.settle(handed.map((entry) => ({ entry }) as Settlement<PutEntry<L>>));
        // PutResults that came while the hand-over waited are looked at before any wait.
        continue;
      }
      if (next === burst.length) return;
      // Only after what was acknowledged is handed over: a failure leaves the rest gaps.
      if (this.failure !== null) throw this.failure;
      await new Promise<void>((resolve) => (this.wakeStep = resolve));
    }
  }

  private wake(): void {
    const wake = this.wakeStep;
    this.wakeStep = null;
    wake?.();
  }
}

/** The seq of a PutResult's app_metadata `{"seq":n}`. */
function seqOf(body: Uint8Array, dataset: string): number {
  let seq: unknown;
  try {
    seq = (JSON.parse(new TextDecoder().decode(body)) as { seq?: unknown } | null)?.seq;
  } catch {
    seq = undefined;
  }
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq)) {
    throw new FlightError(
      'TWG_FLIGHT_PUT_RESULT_INVALID',
      `a PutResult's app_metadata is not {"seq":<n>}: ${JSON.stringify(new TextDecoder().decode(body).slice(0, 200))}`,
      { call: `DoPut path ${dataset}` },
    );
  }
  return seq;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
