import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/**
 * The quarantine lane's own bounds. Both apply; an entry that would cross
 * either is shed. Nothing here is shared with the clean path's budget.
 */
export const quarantineLaneConfigSchema = z.strictObject({
  /** Entries held at most (the ring is allocated up front, hence the cap). */
  capacity: z.number().int().positive().max(1_000_000).default(10_000),
  /** Bytes held at most (as reported per entry), so a few huge rejects cannot exhaust memory. */
  maxBytes: z
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
});

export type QuarantineLaneConfig = z.output<typeof quarantineLaneConfigSchema>;
export type QuarantineLaneConfigInput = z.input<typeof quarantineLaneConfigSchema>;

export function parseQuarantineLaneConfig(
  input: unknown = {},
  path = 'quarantine',
): QuarantineLaneConfig {
  return parseConfig(quarantineLaneConfigSchema, input, path);
}
