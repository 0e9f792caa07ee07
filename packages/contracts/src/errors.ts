import { ThalwegError } from '@thalweg/connector-core';

export const CONTRACT_ERROR_CODES = ['TWG_CONTRACT_VIOLATED'] as const;
export type ContractErrorCode = (typeof CONTRACT_ERROR_CODES)[number];

/**
 * An implementation broke a contract clause. Names the case and says what
 * was observed, so a failing suite reads as a bug report against the sink
 * or source, not against the test.
 */
export class ContractViolation extends ThalwegError<ContractErrorCode> {
  readonly clause: string;

  constructor(clause: string, observed: string) {
    super({
      code: 'TWG_CONTRACT_VIOLATED',
      errorClass: 'fatal-config',
      message: `${clause}: ${observed}`,
    });
    this.clause = clause;
  }
}

/** Throws a ContractViolation unless `ok`. */
export function check(ok: boolean, clause: string, observed: () => string): asserts ok {
  if (!ok) throw new ContractViolation(clause, observed());
}
