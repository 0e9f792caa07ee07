import { InvalidInputError } from './errors.js';

/**
 * One ordered log of a source: a Kafka topic partition, a Pulsar topic
 * partition, or the single log a file set or IPC stream presents.
 */
export interface SourcePartition {
  readonly topic: string;
  readonly partition: number;
}

/**
 * A half-open range of source offsets `[start, end)` within one partition,
 * never empty. Half-open because the source position committed after the span
 * is durable is exactly `end` (Kafka commits the NEXT offset to read), and
 * because adjacency is then `a.end === b.start`.
 *
 * Offsets are JavaScript numbers restricted to safe integers (< 2^53): a
 * partition would need 285 years at a million records per second to pass it,
 * and the checks below refuse anything beyond rather than round it.
 */
export interface OffsetSpan extends SourcePartition {
  readonly start: number;
  readonly end: number;
}

export function checkOffset(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError(
      'TWG_SPAN_INVALID',
      field,
      `${String(value)} is not a non-negative safe integer offset`,
    );
  }
  return value;
}

export function sourcePartition(topic: string, partition: number): SourcePartition {
  if (topic.length === 0) {
    throw new InvalidInputError('TWG_SPAN_INVALID', 'topic', 'must not be empty');
  }
  if (!Number.isSafeInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new InvalidInputError(
      'TWG_SPAN_INVALID',
      'partition',
      `${String(partition)} is not a partition number in [0, 2^31)`,
    );
  }
  return { topic, partition };
}

/** Builds a validated span; refuses inverted, empty and unsafe ranges. */
export function offsetSpan(
  topic: string,
  partition: number,
  start: number,
  end: number,
): OffsetSpan {
  const at = sourcePartition(topic, partition);
  checkOffset(start, 'start');
  checkOffset(end, 'end');
  if (end <= start) {
    throw new InvalidInputError(
      'TWG_SPAN_INVALID',
      'end',
      `span [${start}, ${end}) of ${topic}/${partition} is empty or inverted (end must exceed start)`,
    );
  }
  return { topic: at.topic, partition: at.partition, start, end };
}

export function spanLength(span: OffsetSpan): number {
  return span.end - span.start;
}

export function samePartition(a: SourcePartition, b: SourcePartition): boolean {
  return a.topic === b.topic && a.partition === b.partition;
}

/** A map key for a partition; NUL cannot occur in a Kafka or Pulsar topic name. */
export function partitionKey(p: SourcePartition): string {
  return `${p.topic}\u0000${p.partition}`;
}

export function formatSpan(span: OffsetSpan): string {
  return `${span.topic}/${span.partition}[${span.start},${span.end})`;
}
