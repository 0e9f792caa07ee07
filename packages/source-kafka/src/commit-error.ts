import type { CommitResult } from './consumer-port.js';

/**
 * Broker answers to a commit that mean "this member's view of the group is
 * out of date": the partitions may belong to someone else now. Retrying the
 * same commit is wrong; the assignment has to be re-learnt from the next join.
 */
export const OWNERSHIP_ERRORS: ReadonlySet<string> = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
]);

/** kafkajs throws this (a plain non-retriable error) when its consumer group is gone. */
const NOT_RUNNING = 'consumer#run must be called first';

/**
 * Reads a kafkajs commit failure. kafkajs wraps a broker error in its retry
 * errors (`cause`), so the chain is walked; the broker's error name is the
 * `type` of a KafkaJSProtocolError. Null: a failure to report as such.
 */
export function classifyCommitError(error: unknown): CommitResult | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const type: unknown = (current as { type?: unknown }).type;
    if (typeof type === 'string' && OWNERSHIP_ERRORS.has(type)) {
      return { kind: 'ownership-changed', detail: `the broker answered ${type}` };
    }
    if (current.message.includes(NOT_RUNNING)) {
      return { kind: 'not-running', detail: 'the kafkajs consumer is not running' };
    }
    current = current.cause;
  }
  return null;
}
