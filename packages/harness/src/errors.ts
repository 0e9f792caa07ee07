import { ThalwegError, type ErrorClass } from '@thalweg/connector-core';

export const HARNESS_ERROR_CODES = [
  'TWG_HARNESS_ARGS',
  'TWG_HARNESS_CRASH_AT',
  'TWG_HARNESS_CHILD',
  'TWG_HARNESS_TIMEOUT',
  'TWG_HARNESS_ZEROBUS',
] as const;

export type HarnessErrorCode = (typeof HARNESS_ERROR_CODES)[number];

const CLASS_OF: Record<HarnessErrorCode, ErrorClass> = {
  TWG_HARNESS_ARGS: 'fatal-config',
  TWG_HARNESS_CRASH_AT: 'fatal-config',
  TWG_HARNESS_CHILD: 'fatal-config',
  TWG_HARNESS_TIMEOUT: 'fatal-config',
  TWG_HARNESS_ZEROBUS: 'fatal-config',
};

/**
 * A failure of the harness itself (bad arguments, a child that would not
 * start or stop), as opposed to a finding about the topology, which the
 * harness reports in its JSON line. Every one of them ends the run: an audit
 * built on a run the harness could not drive would prove nothing.
 */
export class HarnessError extends ThalwegError<HarnessErrorCode> {
  constructor(code: HarnessErrorCode, message: string, cause?: unknown) {
    super({ code, errorClass: CLASS_OF[code], message, cause });
  }
}
