import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/**
 * The quarantine lane's own bounds. Both apply; an entry that would cross
 * either is shed. Nothing here is shared with the clean path's budget.
 */
export interface QuarantineLaneConfigInput {
  /**
   * Entries held at most (the ring is allocated up front, hence the cap of
   * 1000000).
   * @defaultValue 10000
   */
  capacity?: number | undefined;
  /**
   * Bytes held at most (as reported per entry), so a few huge rejects cannot
   * exhaust memory.
   * @defaultValue 33554432 (32 MiB)
   */
  maxBytes?: number | undefined;
}

/**
 * The validator of {@link QuarantineLaneConfigInput}; each key's meaning and
 * default are documented there (a type test proves the two agree).
 */
export const quarantineLaneConfigSchema = z.strictObject({
  capacity: z.number().int().positive().max(1_000_000).default(10_000),
  maxBytes: z
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
});

export type QuarantineLaneConfig = z.output<typeof quarantineLaneConfigSchema>;

export function parseQuarantineLaneConfig(
  input: unknown = {},
  path = 'quarantine',
): QuarantineLaneConfig {
  return parseConfig(quarantineLaneConfigSchema, input, path);
}
