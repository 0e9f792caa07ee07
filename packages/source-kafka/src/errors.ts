import { ThalwegError, type ErrorClass, type SourcePartition } from '@thalweg/connector-core';

export const KAFKA_SOURCE_ERROR_CODES = [
  'TWG_KAFKA_OFFSET_UNSAFE',
  'TWG_KAFKA_RECORD_INVALID',
  'TWG_KAFKA_CURSOR_INVALID',
  'TWG_KAFKA_PARTITION_UNKNOWN',
  'TWG_KAFKA_ASSIGNMENT_MISMATCH',
  'TWG_KAFKA_CONSUMER_FAILED',
  'TWG_KAFKA_COMMIT_FAILED',
  'TWG_KAFKA_COMMIT_AHEAD',
  'TWG_KAFKA_LISTENER_FAILED',
  'TWG_KAFKA_MISUSE',
  'TWG_KAFKA_CLIENT_UNSUPPORTED',
  'TWG_KAFKA_TOPIC_UNKNOWN',
  'TWG_KAFKA_BROKER_UNREACHABLE',
  'TWG_KAFKA_POSITION_LOST',
] as const;

export type KafkaSourceErrorCode = (typeof KAFKA_SOURCE_ERROR_CODES)[number];

/**
 * What each failure means for the caller:
 *
 * - a commit the broker did not take is `transient`: the pipeline retries it
 *   with its next position (the latest position wins); so is a broker that
 *   did not answer within `connectTimeoutMs` (a later open may reach it);
 * - a consumer that crashed for good, an offset or a timestamp beyond 2^53 or a listener that threw end the source: `poison` (a new
 *   source may read again, from the last committed position);
 * - wrong cursors, unknown partitions, a commit beyond what was read and
 *   calls in the wrong order, a topic that does not exist (the source never
 *   creates one), a Kafka client that cannot deliver headers exactly (or
 *   cannot run on this Node), and a position whose records the broker has
 *   already deleted, are `fatal-config`: no retry can fix them.
 */
const CLASS_OF: Record<KafkaSourceErrorCode, ErrorClass> = {
  TWG_KAFKA_OFFSET_UNSAFE: 'poison',
  TWG_KAFKA_RECORD_INVALID: 'poison',
  TWG_KAFKA_CURSOR_INVALID: 'fatal-config',
  TWG_KAFKA_PARTITION_UNKNOWN: 'fatal-config',
  TWG_KAFKA_ASSIGNMENT_MISMATCH: 'poison',
  TWG_KAFKA_CONSUMER_FAILED: 'poison',
  TWG_KAFKA_COMMIT_FAILED: 'transient',
  TWG_KAFKA_COMMIT_AHEAD: 'fatal-config',
  TWG_KAFKA_LISTENER_FAILED: 'poison',
  TWG_KAFKA_MISUSE: 'fatal-config',
  TWG_KAFKA_CLIENT_UNSUPPORTED: 'fatal-config',
  TWG_KAFKA_TOPIC_UNKNOWN: 'fatal-config',
  TWG_KAFKA_BROKER_UNREACHABLE: 'transient',
  TWG_KAFKA_POSITION_LOST: 'fatal-config',
};

export class KafkaSourceError extends ThalwegError<KafkaSourceErrorCode> {
  /** The partition the failure is about, when there is one. */
  readonly partition: SourcePartition | undefined;

  constructor(
    code: KafkaSourceErrorCode,
    message: string,
    options: { readonly partition?: SourcePartition; readonly cause?: unknown } = {},
  ) {
    super({ code, errorClass: CLASS_OF[code], message, cause: options.cause });
    this.partition = options.partition;
  }
}

/** The refusal of configured partitions the cluster does not have; null when there are none. */
export function unknownPartitions(missing: readonly SourcePartition[]): KafkaSourceError | null {
  const [first] = missing;
  if (first === undefined) return null;
  return new KafkaSourceError(
    'TWG_KAFKA_PARTITION_UNKNOWN',
    `partitions: ${missing.map(describePartition).join(', ')} do not exist in the cluster`,
    { partition: first },
  );
}

/**
 * The refusal of a subscription the cluster would not serve: the topics it
 * was found not to have (`missing`), or every subscribed one when that could
 * not be told (`missing` empty). `autoCreate` names the client's option that
 * stays off.
 */
export function topicUnknown(
  missing: readonly string[],
  subscribed: readonly string[],
  brokers: readonly string[],
  autoCreate: string,
  cause: unknown,
): KafkaSourceError {
  const known = missing.length > 0;
  const names = (known ? missing : subscribed).map((t) => JSON.stringify(t)).join(', ');
  const what = known ? `no topic ${names} exists` : `the cluster hosts not all of ${names}`;
  return new KafkaSourceError(
    'TWG_KAFKA_TOPIC_UNKNOWN',
    `${what} on ${brokers.join(', ')}; the source never creates topics (${autoCreate} is off)`,
    { cause },
  );
}

/** The refusal of a record whose timestamp a number cannot hold exactly, by partition and offset. */
export function timestampUnsafe(
  partition: SourcePartition,
  offset: string | number,
  timestamp: string | number,
): KafkaSourceError {
  return new KafkaSourceError(
    'TWG_KAFKA_RECORD_INVALID',
    `${describePartition(partition)} offset ${offset}: timestamp ${timestamp} is not an integer below 2^53 ms`,
    { partition: { topic: partition.topic, partition: partition.partition } },
  );
}

/**
 * A fetch position outside the partition's log: before its start, the
 * records between it and the log start were deleted (retention, a
 * truncation) before this source read them; past its end, the log is not
 * the one the position was taken in (the topic recreated). Jumping to the
 * log start would skip or repeat records without a word, so the source
 * ends and says which.
 */
export function positionLost(
  partition: SourcePartition,
  position: bigint,
  answer: { readonly logStartOffset: bigint; readonly highWatermark: bigint },
): KafkaSourceError {
  const at = position >= 0n ? String(position) : 'unknown';
  const start = answer.logStartOffset >= 0n ? String(answer.logStartOffset) : 'unknown';
  const end = answer.highWatermark >= 0n ? String(answer.highWatermark) : 'unknown';
  const past = position >= 0n && answer.highWatermark >= 0n && position > answer.highWatermark;
  const why = past
    ? 'the log ends before it: the topic was recreated or truncated since this position was taken. '
    : 'the records before the log start were deleted before this source read them. ';
  return new KafkaSourceError(
    'TWG_KAFKA_POSITION_LOST',
    `${describePartition(partition)}: position ${at} is outside the log (start ${start}, end ${end}); ` +
      why +
      'Seek the partition to a position in the log to accept that loss.',
    { partition },
  );
}

export function describePartition(p: SourcePartition): string {
  return `${p.topic}/${p.partition}`;
}

/** The first KafkaSourceError in a cause chain (kafkajs wraps what our assigner throws). */
export function findSourceError(error: unknown): KafkaSourceError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof KafkaSourceError) return current;
    current = current.cause;
  }
  return undefined;
}
