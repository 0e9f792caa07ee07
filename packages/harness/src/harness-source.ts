import type { RawContents } from './raw-audit.js';

/** What the broker considers acknowledged, read at one moment (before raw is read back). */
export interface SourcePositions {
  /** Whether the broker will not deliver the record at this offset again. */
  acknowledged(partition: number, offset: number): boolean;
  /** Produced records acknowledged, to compare with `HarnessSource.total`. */
  readonly done: number;
  /**
   * Per partition with an acknowledged position raw does not hold, one
   * line naming it (empty when positions lag or match raw).
   */
  leads(raw: RawContents): string[];
  /** For the progress log. */
  readonly summary: string;
}

/**
 * The run's topic, from the parent's side, whatever the broker: it creates
 * the topic, produces the known records (record `i` to partition
 * `i % partitions`, with a unique payload id), and reads the positions the
 * broker keeps and the offsets the produced records got.
 */
export interface HarnessSource {
  /** The topic as the source names it in its records (raw and coverage are keyed by it). */
  readonly topic: string;
  readonly partitions: number;
  readonly run: string;
  /** Records produced so far. */
  readonly produced: number;
  create(): Promise<void>;
  /** Produces `n` more records, spread over the partitions. */
  produce(n: number): Promise<void>;
  /** The consumer group's or subscription's acknowledged positions. */
  positions(): Promise<SourcePositions>;
  /** Per partition, the offsets of every produced record, ascending. */
  offsets(): Promise<number[][]>;
  /**
   * The offsets a record can be at in [start, end) of a partition, for
   * checking a claimed range (Kafka: every one; Pulsar: the produced ones).
   */
  offsetsIn(partition: number, start: number, end: number): Iterable<number>;
  /**
   * The payload the run produced at an offset of a partition, undefined
   * where it produced none: what a sink holding that record holds, whether
   * or not raw has it yet.
   */
  payloadAt(partition: number, offset: number): string | undefined;
  /** Deletes the topic and the group or subscription (cleanup; failures are the caller's to log). */
  remove(): Promise<void>;
  close(): Promise<void>;
}
