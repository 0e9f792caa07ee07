import { z } from 'zod';

/**
 * Schemas for the option values that are code, not data, shared by every
 * component's options so each checks them the same way and says the same
 * thing. Only the shape can be checked: a function's signature is the
 * caller's type to state.
 */

/** A callback option (a log line sink, an error hook). */
export function functionOption<F>() {
  return z.custom<F>((v) => typeof v === 'function', 'must be a function');
}

/** An object option known by one method it must have (a confirm target, a seam). */
export function objectWith<T>(method: string, what = `an object with a method ${method}()`) {
  return z.custom<T>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as Record<string, unknown>)[method] === 'function',
    `must be ${what}`,
  );
}
