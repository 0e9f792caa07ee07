import { InvalidInputError } from './errors.js';

declare const sinkIdBrand: unique symbol;

/**
 * The stable name of a sink within a topology. It keys coverage in the offset
 * store and labels metrics, so it is restricted to characters that are safe in
 * a storage key, an object name and a metric label, and it must not change
 * across restarts (renaming a sink orphans its coverage).
 */
export type SinkId = string & { readonly [sinkIdBrand]: 'SinkId' };

const SINK_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;

export function sinkId(value: string): SinkId {
  if (!SINK_ID.test(value)) {
    throw new InvalidInputError(
      'TWG_SINK_ID_INVALID',
      'sinkId',
      `${JSON.stringify(value)} must match ${SINK_ID.source} (lower-case, 1-128 characters)`,
    );
  }
  return value as SinkId;
}

export function isSinkId(value: unknown): value is SinkId {
  return typeof value === 'string' && SINK_ID.test(value);
}
