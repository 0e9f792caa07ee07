import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const OTEL_ERROR_CODES = [
  /** An option of `instrumentMetrics` or `traceEvents` out of its range; the message names it. */
  'TWG_OTEL_OPTION_INVALID',
] as const;

export type OtelErrorCode = (typeof OTEL_ERROR_CODES)[number];

/** A bad option is the operator's to fix: no retry changes it. */
const CLASS_OF: Record<OtelErrorCode, ErrorClass> = {
  TWG_OTEL_OPTION_INVALID: 'fatal-config',
};

/** Every failure of this package; `field` names the option at fault. */
export class OtelError extends ThalwegError<OtelErrorCode> {
  constructor(
    code: OtelErrorCode,
    readonly field: string,
    message: string,
  ) {
    super({ code, errorClass: CLASS_OF[code], message: `${field}: ${message}` });
  }
}
