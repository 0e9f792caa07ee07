import { ThalwegError, type ErrorClass, type SourcePartition } from '@thalweg/connector-core';

export const PULSAR_SOURCE_ERROR_CODES = [
  'TWG_PULSAR_MESSAGE_ID_INVALID',
  'TWG_PULSAR_ID_OUT_OF_RANGE',
  'TWG_PULSAR_CURSOR_INVALID',
  'TWG_PULSAR_TOPIC_UNKNOWN',
  'TWG_PULSAR_TOPIC_INVALID',
  'TWG_PULSAR_BROKER_UNREACHABLE',
  'TWG_PULSAR_SESSION_CLOSED',
  'TWG_PULSAR_MISUSE',
] as const;

export type PulsarSourceErrorCode = (typeof PULSAR_SOURCE_ERROR_CODES)[number];

/**
 * What each failure means for the caller:
 *
 * - a message id that does not decode, or that the offset layout cannot
 *   hold, ends the source: `poison` for the first (the broker sent what we
 *   cannot read), `fatal-config` for the second (the layout must change);
 * - a bad stored cursor, a topic that does not exist, a topic name that is
 *   not `persistent://tenant/namespace/name` and calls in the wrong order
 *   are `fatal-config`;
 * - a broker that does not answer, or a session it closed, are `transient`:
 *   a new session reads again from what was acknowledged (or the cursor).
 */
const CLASS_OF: Record<PulsarSourceErrorCode, ErrorClass> = {
  TWG_PULSAR_MESSAGE_ID_INVALID: 'poison',
  TWG_PULSAR_ID_OUT_OF_RANGE: 'fatal-config',
  TWG_PULSAR_CURSOR_INVALID: 'fatal-config',
  TWG_PULSAR_TOPIC_UNKNOWN: 'fatal-config',
  TWG_PULSAR_TOPIC_INVALID: 'fatal-config',
  TWG_PULSAR_BROKER_UNREACHABLE: 'transient',
  TWG_PULSAR_SESSION_CLOSED: 'transient',
  TWG_PULSAR_MISUSE: 'fatal-config',
};

export class PulsarSourceError extends ThalwegError<PulsarSourceErrorCode> {
  /** The partition the failure is about, when there is one. */
  readonly partition: SourcePartition | undefined;

  constructor(
    code: PulsarSourceErrorCode,
    message: string,
    options: { readonly partition?: SourcePartition; readonly cause?: unknown } = {},
  ) {
    super({ code, errorClass: CLASS_OF[code], message, cause: options.cause });
    this.partition = options.partition;
  }
}

/** An error's message, or the thrown value as text, for a log line. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
