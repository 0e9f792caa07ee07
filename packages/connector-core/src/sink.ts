import type { Confirm, Lane } from './confirm.js';
import type { LaneMetrics } from './delivery/delivery-metrics.js';
import type { DeliveryPressure } from './delivery/delivery-pressure.js';
import type { DurableGuarantee, Durability } from './durability.js';
import type { OffsetSpan, SourcePartition } from './offset-span.js';
import type { SinkId } from './sink-id.js';

/**
 * Whether raw can be read back by offset window, which recovery needs. A
 * write-only sink may say why (`reason`), and the primary-raw refusal quotes it.
 *
 * A readable raw whose reads trail its acknowledgements (a lakehouse table
 * whose metadata is generated after each commit) says by how much at most:
 * `visibleWithinMs`. What it acknowledged and does not show yet is then a
 * hole only once it stayed unseen that long. Absent: a raw shows what it
 * acknowledged at once (segments on local disk).
 */
export type RecoveryAccess =
  | { readonly kind: 'readable'; readonly visibleWithinMs?: number }
  | { readonly kind: 'write-only'; readonly reason?: string };

/** The static facts about a sink that topology validation decides on. */
export interface SinkDescriptor<D extends Durability = Durability> {
  readonly id: SinkId;
  /** The sink kind, for messages and metrics: `raw-segments`, `postgres`, `zerobus`. */
  readonly kind: string;
  readonly durability: D;
  readonly recovery: RecoveryAccess;
}

/** A descriptor that satisfies the primary-raw role at the type level. */
export type PrimaryRawDescriptor = SinkDescriptor<DurableGuarantee> & {
  readonly recovery: { readonly kind: 'readable'; readonly visibleWithinMs?: number };
};

/**
 * The delivery seam. `submit` resolves when the sink has ACCEPTED the batch
 * (queued to its transport), not when it is durable: waiting for durability
 * per batch would serialise the sink. The durable acknowledgement arrives
 * later on the sink's ack lane, which applies `confirm` through the
 * `ConfirmTarget` the sink was built with.
 *
 * A full internal queue makes `submit` wait: that wait is the backpressure.
 * `L` is the lane, so the confirmation token's kind is checked by the compiler.
 */
export interface Sink<L extends Lane, B> {
  readonly descriptor: SinkDescriptor;
  submit(batch: B, span: OffsetSpan, confirm: Confirm<L>): Promise<void>;
  /** Resolves once every batch submitted before the call is confirmed. */
  flush(): Promise<void>;
  /** Flushes, then releases the transport. Submitting after close throws. */
  close(): Promise<void>;
  /**
   * Its queue's fill and its failing writes, now. The pipeline reads the
   * primary raw's on every flow-control cycle: its queue filling is the
   * channel signal, its failing writes the write-failure signal. A sink
   * without it reads as an empty queue with no failures.
   */
  pressure?(): DeliveryPressure;
  /**
   * The metrics of each of its ack lanes, for telemetry (one for a sink with
   * one lane; one per stream for a pooled sink). The objects are live: a
   * reader keeps them and reads them again at each scrape. A sink without
   * it exports no lane metrics.
   */
  lanes?(): readonly LaneMetrics[];
}

/**
 * A sink that may hold the primary-raw role: durable, and readable back by
 * offset window so that recovery can replay lagging secondaries from it.
 */
export interface ReplayableSink<B> extends Sink<'primary-raw', B> {
  readonly descriptor: PrimaryRawDescriptor;
  /**
   * The source cluster raw computes the record ids of what it holds with
   * (ADR 0003). A topology refuses a raw whose cluster is not its source's.
   */
  readonly cluster: string;
  /** Reads back what was durably written for `span`, in offset order. */
  read(span: OffsetSpan, signal?: AbortSignal): AsyncIterable<B>;
  /**
   * What the sink durably holds, per partition, as ascending spans: read from
   * the sink itself, so it is exact even where a crash cut the recording of
   * raw's coverage short. Recovery plans against it.
   */
  held(): Promise<readonly HeldPartition[]>;
  /**
   * Checks, now, that raw may still be read back, and throws (fatal-config,
   * naming why) when it may not: a lakehouse raw describes its table again,
   * since a property flipped under a running pipeline can remove its read
   * path. Recovery calls it before every pass. A raw with nothing to check
   * (segments on local disk) has none.
   */
  verifyReadable?(): Promise<void>;
}

/** The spans of one partition a replayable sink durably holds. */
export interface HeldPartition {
  readonly partition: SourcePartition;
  readonly spans: readonly OffsetSpan[];
}
