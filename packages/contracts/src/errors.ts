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

/** A settled promise's outcome, observed from the moment it was created. */
export function outcome(
  p: Promise<unknown>,
): Promise<{ ok: true } | { ok: false; error: unknown }> {
  return p.then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** A thalweg error: a `TWG_` code and a class that decides the caller's action. */
export function isCoded(error: unknown): error is ThalwegError {
  if (!(error instanceof ThalwegError)) return false;
  const code: unknown = error.code;
  return typeof code === 'string' && code.startsWith('TWG_');
}

export function describeError(error: unknown): string {
  if (error instanceof ThalwegError)
    return `${error.name} ${error.code} (${error.errorClass}): ${error.message}`;
  if (error instanceof Error) return `${error.name} without a TWG_ code: ${error.message}`;
  return `a non-error value ${String(error)}`;
}
