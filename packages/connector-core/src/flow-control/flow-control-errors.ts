import { ThalwegError, type ErrorClass } from '../errors.js';

export const FLOW_CONTROL_ERROR_CODES = [
  'TWG_FLOW_SIGNAL_INVALID',
  'TWG_BUDGET_AMOUNT_INVALID',
  'TWG_BUDGET_OVER_RELEASE',
  'TWG_BUDGET_ACQUIRE_ABORTED',
  'TWG_THROTTLE_WAIT_ABORTED',
  'TWG_QUARANTINE_WAIT_ABORTED',
] as const;

export type FlowControlErrorCode = (typeof FLOW_CONTROL_ERROR_CODES)[number];

const CLASS_OF: Record<FlowControlErrorCode, ErrorClass> = {
  // A signal or amount out of range is a wiring bug in the embedder: no retry fixes it.
  TWG_FLOW_SIGNAL_INVALID: 'fatal-config',
  TWG_BUDGET_AMOUNT_INVALID: 'fatal-config',
  // Releasing bytes never taken means the accounting is already wrong and the
  // budget would over-admit from here on: rebuild, do not carry on.
  TWG_BUDGET_OVER_RELEASE: 'poison',
  // The caller withdrew; asking again may well succeed.
  TWG_BUDGET_ACQUIRE_ABORTED: 'transient',
  TWG_THROTTLE_WAIT_ABORTED: 'transient',
  TWG_QUARANTINE_WAIT_ABORTED: 'transient',
};

/** A flow-control mechanism refused an input or a wait was withdrawn. */
export class FlowControlError extends ThalwegError<FlowControlErrorCode> {
  constructor(code: FlowControlErrorCode, message: string, cause?: unknown) {
    super({
      code,
      errorClass: CLASS_OF[code],
      message,
      ...(cause === undefined ? {} : { cause }),
    });
  }
}

/**
 * A clock reading. NaN or an infinity would be compared like a time: it can
 * start a stuck spell at minus infinity or jump past every hold at once.
 */
export function assertNow(now: number): void {
  if (!Number.isFinite(now)) {
    throw new FlowControlError(
      'TWG_FLOW_SIGNAL_INVALID',
      `now: expected a finite clock reading, got ${String(now)}`,
    );
  }
}

/** Ratios and fills are fractions; NaN would compare false everywhere and read as calm. */
export function assertRatio(value: number, field: string): void {
  if (!(value >= 0) || !Number.isFinite(value)) {
    throw new FlowControlError(
      'TWG_FLOW_SIGNAL_INVALID',
      `${field}: expected a finite number >= 0, got ${String(value)}`,
    );
  }
}
