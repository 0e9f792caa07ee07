import { ThalwegError, type ErrorClass, type ErrorScope } from '@thalweg/connector-core';

export const ZEROBUS_ERROR_CODES = [
  'TWG_ZEROBUS_TRANSIENT',
  'TWG_ZEROBUS_POISON_BATCH',
  'TWG_ZEROBUS_POISON_STREAM',
  'TWG_ZEROBUS_FATAL_CONFIG',
] as const;

export type ZerobusErrorCode = (typeof ZEROBUS_ERROR_CODES)[number];

/**
 * What a transport failure means for the stream, which decides the action:
 *
 * - `transient`      back off and retry on the SAME stream (opening a new one
 *                    per hiccup is the stream storm the predecessor suffered);
 * - `poison-batch`   this batch can never be accepted (it does not match the
 *                    table); the stream itself is healthy: a refusal of
 *                    scope `batch`, which the caller sets aside (ADR 0025);
 * - `poison-stream`  the stream is dead: end its ack lane, rebuild it within a
 *                    bounded budget, replaying what it had not confirmed;
 * - `fatal-config`   credentials, table name, schema: fail loud, no retry.
 */
export type ZerobusFailure = 'transient' | 'poison-batch' | 'poison-stream' | 'fatal-config';

const CODE_OF: Record<ZerobusFailure, ZerobusErrorCode> = {
  transient: 'TWG_ZEROBUS_TRANSIENT',
  'poison-batch': 'TWG_ZEROBUS_POISON_BATCH',
  'poison-stream': 'TWG_ZEROBUS_POISON_STREAM',
  'fatal-config': 'TWG_ZEROBUS_FATAL_CONFIG',
};

const CLASS_OF: Record<ZerobusFailure, ErrorClass> = {
  transient: 'transient',
  'poison-batch': 'poison',
  'poison-stream': 'poison',
  'fatal-config': 'fatal-config',
};

export class ZerobusSinkError extends ThalwegError<ZerobusErrorCode> {
  readonly failure: ZerobusFailure;

  /**
   * `scope` is `batch` for a poison batch unless told otherwise, `sink`
   * for the rest; a transient failure that outlasted its retries on one
   * batch's submit, the stream unharmed, is raised with scope `batch`.
   */
  constructor(failure: ZerobusFailure, message: string, cause?: unknown, scope?: ErrorScope) {
    super({
      code: CODE_OF[failure],
      errorClass: CLASS_OF[failure],
      message,
      cause,
      scope: scope ?? (failure === 'poison-batch' ? 'batch' : 'sink'),
    });
    this.failure = failure;
  }
}
