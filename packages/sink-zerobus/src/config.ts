import { z } from 'zod';
import { parseConfig } from '@thalweg/connector-core';

const MiB = 1024 * 1024;

const backoff = (base: number, max: number, attempts: number) =>
  z
    .object({
      // Node timers overflow above 2^31 - 1 ms (they would fire after 1 ms).
      baseDelayMs: z.number().positive().max(0x7fffffff).default(base),
      maxDelayMs: z.number().positive().max(0x7fffffff).default(max),
      maxAttempts: z.number().int().min(1).default(attempts),
    })
    .strict()
    .prefault({});

/**
 * Configuration of a Zerobus sink. Conservative defaults, every knob logged
 * at start. Deliberately absent: any way to wait for durability per batch —
 * fire-and-forget with a background ack lane is the structure, not a knob,
 * and an unknown key (such as `waitPerBatch`) is refused.
 */
export const zerobusConfigSchema = z
  .object({
    /** Unity Catalog table `catalog.schema.table`. */
    table: z
      .string()
      .regex(/^[^.\s]+\.[^.\s]+\.[^.\s]+$/, 'must be a three-part name catalog.schema.table'),
    /** Streams in the pool; when absent, sized from the bandwidth to reach. */
    streams: z.number().int().min(1).max(64).optional(),
    /** The bandwidth the pool should reach, in bytes per second. */
    targetBytesPerSec: z
      .number()
      .positive()
      .default(32 * MiB),
    /** What one stream sustains, in bytes per second (measure it for your workspace). */
    perStreamBytesPerSec: z
      .number()
      .positive()
      .default(16 * MiB),
    maxStreams: z.number().int().min(1).max(64).default(16),
    /** Confirmations queued per stream before submit waits (the backpressure). */
    channelCapacity: z.number().int().min(1).max(65_536).default(256),
    /** Transient failures: retried in place on the same stream. */
    retry: backoff(50, 5_000, 10),
    /** Poisoned streams: replaced and replayed, at most this many times in a row. */
    rebuild: backoff(200, 10_000, 5),
  })
  .strict();

export type ZerobusConfigInput = z.input<typeof zerobusConfigSchema>;
export type ZerobusConfig = z.output<typeof zerobusConfigSchema>;

export function parseZerobusConfig(input: unknown, path = 'zerobus'): ZerobusConfig {
  return parseConfig(zerobusConfigSchema, input, path);
}

/** The pool size: explicit, or enough streams to reach the target bandwidth. */
export function poolSize(config: ZerobusConfig): number {
  if (config.streams !== undefined) return config.streams;
  return Math.min(
    config.maxStreams,
    Math.max(1, Math.ceil(config.targetBytesPerSec / config.perStreamBytesPerSec)),
  );
}

/** One line per knob, for the start-up log. */
export function describeConfig(config: ZerobusConfig): string[] {
  const flat: [string, unknown][] = [];
  const walk = (prefix: string, value: unknown) => {
    if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) walk(prefix === '' ? k : `${prefix}.${k}`, v);
    } else flat.push([prefix, value]);
  };
  walk('', config);
  return [...flat.map(([k, v]) => `${k}=${String(v)}`), `pool.streams=${poolSize(config)}`];
}
