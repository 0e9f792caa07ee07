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

/** A backoff: delays doubling from `baseDelayMs` up to `maxDelayMs`, at most `maxAttempts` tries. */
export interface ZerobusBackoffInput {
  /** The first delay, in ms. */
  readonly baseDelayMs?: number | undefined;
  /** The longest delay, in ms (at most 2^31 - 1). */
  readonly maxDelayMs?: number | undefined;
  /** Tries before the failure is given up on (at least 1). */
  readonly maxAttempts?: number | undefined;
}

/**
 * A Zerobus sink's configuration as written (the input of
 * `zerobusConfigSchema`, spelled out so each key keeps its meaning and
 * default in the `.d.ts`; test/config.test.ts checks it is the schema's input
 * type exactly). Untyped input is validated all the same.
 */
export interface ZerobusConfigInput {
  /** Unity Catalog table `catalog.schema.table`. */
  readonly table: string;
  /** Streams in the pool (1 to 64); when absent, sized from `targetBytesPerSec`. */
  readonly streams?: number | undefined;
  /** The bandwidth the pool should reach, in bytes per second. Default 32 MiB/s. */
  readonly targetBytesPerSec?: number | undefined;
  /** What one stream sustains, in bytes per second (measure it for your workspace). Default 16 MiB/s. */
  readonly perStreamBytesPerSec?: number | undefined;
  /** The largest pool a bandwidth target may size (1 to 64). Default 16. */
  readonly maxStreams?: number | undefined;
  /** Confirmations queued per stream before submit waits (the backpressure). Default 256. */
  readonly channelCapacity?: number | undefined;
  /** Transient failures, retried in place on the same stream. Default 50 ms to 5 s, 10 tries. */
  readonly retry?: ZerobusBackoffInput | undefined;
  /** Poisoned streams, replaced and replayed at most this many times in a row. Default 200 ms to 10 s, 5 tries. */
  readonly rebuild?: ZerobusBackoffInput | undefined;
}

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
