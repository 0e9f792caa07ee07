import { z } from 'zod';
import { parseConfig } from '../parse-config.js';

/**
 * The admission budget: how many estimated expanded bytes may be in flight
 * between fetch and downstream acknowledgement, and how a fresh process
 * grows into it.
 */
export interface ByteBudgetConfigInput {
  /**
   * The budget, in bytes, not records: record sizes vary by orders of
   * magnitude, so a record count bounds nothing. Conservative by default;
   * size it to the memory the process may spend on records in flight.
   * @defaultValue 67108864 (64 MiB)
   */
  bytes?: number | undefined;
  /** How a fresh process grows into the budget. */
  warmUp?: ByteBudgetWarmUpInput | undefined;
}

/** The reduced budget of a fresh process, until one of its two limits is reached. */
export interface ByteBudgetWarmUpInput {
  /**
   * Share of the budget (above 0, at most 1) granted until warm-up ends. A
   * process restarting against a deep backlog would otherwise prefetch the
   * whole budget before its estimates and caches are warm, and run out of
   * memory.
   * @defaultValue 0.25
   */
  fraction?: number | undefined;
  /**
   * Acknowledgements after which the full budget opens. Warm-up also ends
   * once the bytes acknowledged reach the warm-up limit (`fraction` of the
   * budget): a whole window at the reduced limit has been made durable.
   * That rule does not stretch with the batch size, as a count of acks does.
   * @defaultValue 1000
   */
  acks?: number | undefined;
  /**
   * Or this long after start, in ms, whichever comes first.
   * @defaultValue 30000
   */
  timeoutMs?: number | undefined;
}

/**
 * The validator of {@link ByteBudgetConfigInput}; each key's meaning and
 * default are documented there (a type test proves the two agree).
 */
export const byteBudgetConfigSchema = z.strictObject({
  bytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  warmUp: z
    .strictObject({
      fraction: z.number().gt(0).max(1).default(0.25),
      acks: z.number().int().min(0).default(1000),
      timeoutMs: z.number().int().min(0).default(30_000),
    })
    .prefault({}),
});

export type ByteBudgetConfig = z.output<typeof byteBudgetConfigSchema>;

export function parseByteBudgetConfig(input: unknown = {}, path = 'byteBudget'): ByteBudgetConfig {
  return parseConfig(byteBudgetConfigSchema, input, path);
}
