/**
 * True when A and B are the same type (optionality, readonly and
 * `| undefined` included), not merely assignable to each other: two generic
 * functions compare equal only when their conditional types are identical.
 */
export type Equals<A, B> =
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the identity trick needs T in each conditional once
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when its argument is `true`: a type assertion for tsc -b. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is the asserted type, never inferred
export function agree<T extends true>(): T {
  return true as T;
}
