import {
  DeliveryMetrics,
  type Confirm,
  type ConfirmTarget,
  type Lane,
  type LaneMetrics,
  type OffsetSpan,
  type Sink,
  type SinkDescriptor,
  type SinkId,
} from '@thalweg/connector-core';
import type { RecordBatch, Schema } from 'apache-arrow';
import { FlightError } from './errors.js';
import type { FlightClient } from './flight-client.js';
import { FlightPutLane } from './flight-put-lane.js';

/** A sink batch as the Arrow batch written on the DoPut, with what its receipt counts. */
export interface FlightSinkBatch {
  readonly batch: RecordBatch;
  readonly records: number;
  /** What the batch holds in memory while in flight: its cost in the lane's bounds. */
  readonly bytes: number;
}

export interface FlightSinkOptions<L extends Lane, B> {
  readonly id: SinkId;
  readonly client: FlightClient;
  /** The dataset written: descriptor PATH [dataset]. */
  readonly dataset: string;
  /** The schema of every batch of the dataset (sent first on each DoPut). */
  readonly schema: Schema;
  /** The sink's batch as the Arrow batch written. */
  readonly encode: (batch: B) => FlightSinkBatch;
  readonly confirm: ConfirmTarget<L>;
  /**
   * Batches written and not yet acknowledged, at most (default 256): the
   * pipelining depth, and the bound on what the sink holds.
   */
  readonly maxInFlight?: number;
  /** Operator events: a stream that failed, a confirmation target that threw. */
  readonly log?: (line: string) => void;
}

/** The default pipelining depth of a Flight sink. */
export const DEFAULT_FLIGHT_MAX_IN_FLIGHT = 256;

/**
 * An Arrow Flight sink on the one delivery layer (ADR 0018): one DoPut
 * stream for its dataset, many batches in flight on it, and a batch
 * confirmed only after the server's PutResult for it (descriptor durability
 * `server-ack`), in order (see FlightPutLane).
 *
 * When the DoPut stream fails, its lane ends loudly: the batches not
 * acknowledged are never confirmed and stay gaps for recovery (raw replays
 * a secondary's gaps; a raw sink's source position stays behind them). The
 * next `flush` rejects once with that failure. The next `submit` opens a
 * new DoPut stream (as sink-zerobus rebuilds a dead stream on its next
 * submit), so later batches go on; nothing is replayed by the sink itself.
 */
export class FlightSink<L extends Lane, B> implements Sink<L, B> {
  readonly descriptor: SinkDescriptor;
  private readonly metrics = new DeliveryMetrics();
  private current: FlightPutLane<L> | null = null;
  /** A failed stream's error not yet reported by a flush. */
  private unreported: Error | null = null;
  /** Failures a flush already reported (each stream's once). */
  private readonly reported = new WeakSet<Error>();
  private streams = 0;
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly options: FlightSinkOptions<L, B>,
    descriptor?: SinkDescriptor,
  ) {
    this.descriptor = descriptor ?? {
      id: options.id,
      kind: 'flight',
      durability: { kind: 'server-ack' },
      recovery: { kind: 'write-only' },
    };
  }

  /** Resolves once the batch is written on the DoPut (flow control) and queued for its PutResult. */
  async submit(batch: B, span: OffsetSpan, confirm: Confirm<L>): Promise<void> {
    if (this.closed) {
      throw new FlightError('TWG_FLIGHT_STATE', `sink "${this.options.id}" is closed`);
    }
    const encoded = this.options.encode(batch);
    if (encoded.batch.numRows === 0) {
      throw new FlightError(
        'TWG_FLIGHT_MISUSE',
        `an empty batch for ${span.topic}/${span.partition} [${span.start},${span.end}) is not written`,
      );
    }
    await this.live().submit(encoded.batch, span, confirm, encoded.records, encoded.bytes);
  }

  /**
   * Resolves once every batch submitted before the call is confirmed.
   * Rejects once with the failure of a stream that ended with batches
   * unconfirmed (they are gaps now).
   */
  async flush(): Promise<void> {
    const current = this.current;
    if (current !== null && current.failed === null) {
      await current.flush().catch((e: unknown) => this.noteFailure(e));
    }
    this.noteFailure(current?.failed);
    const failure = this.unreported;
    this.unreported = null;
    if (failure !== null) {
      this.reported.add(failure);
      throw failure;
    }
  }

  /** Flushes, then half-closes the DoPut and waits for the server to end it. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      const current = this.current;
      this.current = null;
      if (current === null) return;
      await current.close();
    })();
    return this.closing;
  }

  /** The one lane's metrics, kept across the DoPut streams it opened, labelled by the dataset. */
  lanes(): readonly LaneMetrics[] {
    return [{ stream: this.options.dataset, metrics: this.metrics }];
  }

  /** DoPut streams opened so far (a failed stream is replaced on the next submit). */
  get streamsOpened(): number {
    return this.streams;
  }

  /** The live DoPut stream, opening one if there is none or the last one failed. */
  private live(): FlightPutLane<L> {
    const current = this.current;
    if (current !== null && current.failed === null) return current;
    if (current !== null) {
      this.noteFailure(current.failed);
      this.log(
        `DoPut of dataset ${this.options.dataset} failed; its unacknowledged batches stay gaps, a new stream takes the next: ${String(current.failed)}`,
      );
      void current.close();
    }
    const { options } = this;
    this.streams += 1;
    this.current = new FlightPutLane<L>({
      sink: options.id,
      client: options.client,
      dataset: options.dataset,
      schema: options.schema,
      target: options.confirm,
      maxInFlight: options.maxInFlight ?? DEFAULT_FLIGHT_MAX_IN_FLIGHT,
      metrics: this.metrics,
      onConfirmFailure: (e) => this.log(`confirmation target failed (coverage lags): ${String(e)}`),
    });
    this.current.running.catch((e: unknown) => {
      this.noteFailure(e);
      this.log(`DoPut of dataset ${options.dataset} ended: ${String(e)}`);
    });
    return this.current;
  }

  private noteFailure(error: unknown): void {
    if (error === null || error === undefined) return;
    const e = error instanceof Error ? error : new Error(JSON.stringify(error));
    if (!this.reported.has(e)) this.unreported ??= e;
  }

  private log(line: string): void {
    (this.options.log ?? ((l: string) => console.info(l)))(
      `thalweg flight sink ${this.options.id}: ${line}`,
    );
  }
}
