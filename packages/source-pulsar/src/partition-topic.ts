import type { SourcePartition } from '@thalweg/connector-core';

/**
 * The topic one session is on: `<topic>-partition-N` for a partitioned
 * topic, the topic itself when it is not partitioned (its one partition is 0).
 */
export function sessionTopic(partition: SourcePartition, partitioned: boolean): string {
  return partitioned
    ? `${partition.topic}-partition-${String(partition.partition)}`
    : partition.topic;
}

/** The partitions a count from the admin API stands for: 0 is a topic that is not partitioned. */
export function partitionsOf(topic: string, count: number): SourcePartition[] {
  const n = Math.max(1, count);
  return Array.from({ length: n }, (_, partition) => ({ topic, partition }));
}
