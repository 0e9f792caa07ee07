import { partitionKey, type PartitionEnd, type SourcePartition } from '@thalweg/connector-core';

/**
 * Where each owned partition's log ends, as the last fetch of it said (the
 * high watermark Kafka returns with every fetch response): the source lag
 * metric's log end, read off what the client fetched anyway, never asked for.
 * A partition not fetched yet is absent, and so is one this member lost.
 */
export class LogEnds {
  private readonly ends = new Map<string, PartitionEnd>();

  /**
   * The latest fetch of `partition` reported `highWatermark` (decimal). A
   * value that is no offset thalweg can hold (beyond 2^53, negative, not a
   * number) leaves the last one standing: telemetry never stops a read.
   */
  note(partition: SourcePartition, highWatermark: string): void {
    const next = Number(highWatermark);
    if (highWatermark === '' || !Number.isSafeInteger(next) || next < 0) return;
    const at = { topic: partition.topic, partition: partition.partition };
    this.ends.set(partitionKey(at), { partition: at, next });
  }

  /** The partition was revoked: its log end is no longer this member's to report. */
  drop(partition: SourcePartition): void {
    this.ends.delete(partitionKey(partition));
  }

  list(): readonly PartitionEnd[] {
    return [...this.ends.values()];
  }
}
