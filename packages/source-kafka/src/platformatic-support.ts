import type { Consumer, GroupAssignment } from '@platformatic/kafka';
import type { SourcePartition } from '@thalweg/connector-core';
import { KafkaSourceError, topicUnknown } from './errors.js';

/** Every Kafka error name (`apiId`) in a @platformatic/kafka error, its nested errors and causes. */
export function apiIdsOf(error: unknown, into = new Set<string>(), depth = 0): Set<string> {
  if (depth > 8 || typeof error !== 'object' || error === null) return into;
  const e = error as { apiId?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.apiId === 'string') into.add(e.apiId);
  if (Array.isArray(e.errors)) for (const inner of e.errors) apiIdsOf(inner, into, depth + 1);
  apiIdsOf(e.cause, into, depth + 1);
  return into;
}

/**
 * Whether the client refused a topic the cluster does not have. It turns
 * Kafka's UNKNOWN_TOPIC_OR_PARTITION into a `UserError` whose only mark is
 * its message ("Unknown topic <name>."), so both are read.
 */
export function isUnknownTopic(error: unknown): boolean {
  if (apiIdsOf(error).has('UNKNOWN_TOPIC_OR_PARTITION')) return true;
  const e = error as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === 'PLT_KFK_USER' &&
    typeof e.message === 'string' &&
    e.message.startsWith('Unknown topic ')
  );
}

export function toPartitions(assignments: readonly GroupAssignment[]): SourcePartition[] {
  return assignments.flatMap((a) =>
    a.partitions.map((partition) => ({ topic: a.topic, partition })),
  );
}

/**
 * The error for a subscription the cluster refused: each topic is asked
 * alone, and those the cluster does not have are named (every topic, if
 * that cannot be told).
 */
export async function missingTopics(
  client: Consumer,
  topics: readonly string[],
  brokers: readonly string[],
  cause: unknown,
): Promise<KafkaSourceError> {
  const missing: string[] = [];
  for (const topic of topics) {
    try {
      await client.metadata({ topics: [topic], autocreateTopics: false, forceUpdate: true });
    } catch (error) {
      if (isUnknownTopic(error)) missing.push(topic);
    }
  }
  return topicUnknown(missing, topics, brokers, 'autocreateTopics', cause);
}
