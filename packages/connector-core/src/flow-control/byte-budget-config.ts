import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/**
 * The admission budget: how many estimated expanded bytes may be in flight
 * between fetch and downstream acknowledgement, and how a fresh process
 * grows into it.
 */
export const byteBudgetConfigSchema = z.strictObject({
  /**
   * In bytes, not records: record sizes vary by orders of magnitude, so a
   * record count bounds nothing. Conservative by default; size it to the
   * memory the process may spend on records in flight.
   */
  bytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  warmUp: z
    .strictObject({
      /**
       * Share of the budget granted until warm-up ends. A process restarting
       * against a deep backlog would otherwise prefetch the whole budget
       * before its estimates and caches are warm, and run out of memory.
       */
      fraction: z.number().gt(0).max(1).default(0.25),
      /** Acknowledgements after which the full budget opens. */
      acks: z.number().int().min(0).default(1000),
      /** Or this long after start, whichever comes first. */
      timeoutMs: z.number().int().min(0).default(30_000),
    })
    .prefault({}),
});

export type ByteBudgetConfig = z.output<typeof byteBudgetConfigSchema>;
export type ByteBudgetConfigInput = z.input<typeof byteBudgetConfigSchema>;

export function parseByteBudgetConfig(input: unknown = {}, path = 'byteBudget'): ByteBudgetConfig {
  return parseConfig(byteBudgetConfigSchema, input, path);
}
