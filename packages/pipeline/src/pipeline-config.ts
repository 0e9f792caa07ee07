import { flowControlConfigSchema, parseConfig } from '@thalweg/connector-core';
import { z } from 'zod';
import { recoveryConfigSchema } from './recovery/recovery-config.js';

const positiveInt = z.number().int().positive();

/** Per-secondary settings, keyed by the sink id. */
export const secondaryConfigSchema = z.strictObject({
  /**
   * Accept a secondary that cannot confirm durability. Its coverage is then
   * never recorded (there is no durable acknowledgement to record it after),
   * so recovery does not repair it: the opt-out trades repair for throughput.
   */
  allowNonDurable: z.boolean().default(false),
  /**
   * The secondary's own queue between raw submission and its sink. When it is
   * full, batches are shed and stay coverage gaps for recovery to replay: a
   * slow secondary must never hold up the source or raw.
   */
  maxQueuedBatches: positiveInt.default(256),
  maxQueuedBytes: positiveInt.default(64 * 1024 * 1024),
});

export type SecondaryConfig = z.output<typeof secondaryConfigSchema>;

/**
 * Everything about a pipeline that is plain data, validated once at start.
 * The sinks and the source are objects and are checked by their descriptors
 * (see `validateTopology`); this schema covers the knobs.
 */
export const pipelineConfigSchema = z.strictObject({
  /**
   * `batch` (default): the position advances to a batch's end once the whole
   * batch is durable; a partial failure replays the batch, and the record id
   * absorbs what had landed. `record`: every record is its own span, for
   * streams that cannot afford a whole-batch replay.
   */
  granularity: z.enum(['batch', 'record']).default('batch'),
  /** Largest number of records and bytes submitted to raw as one span. */
  maxBatchRecords: positiveInt.default(10_000),
  maxBatchBytes: positiveInt.default(8 * 1024 * 1024),
  /**
   * A record larger than this is written to raw (raw keeps everything) but
   * goes to quarantine with reason `oversized` instead of to the secondaries.
   */
  maxRecordBytes: positiveInt.default(4 * 1024 * 1024),
  secondaries: z.record(z.string(), secondaryConfigSchema).default({}),
  flowControl: flowControlConfigSchema.prefault({}),
  /** The memory the process may use; the memory ratio is RSS over this. */
  memoryLimitBytes: positiveInt.default(1024 * 1024 * 1024),
  /** How often flow control is evaluated and pending positions committed. */
  evaluateEveryMs: positiveInt.default(200),
  commit: z
    .strictObject({
      /**
       * Consecutive failed position commits after which the pipeline stops.
       * A position that cannot be committed pins the source; carrying on
       * would only grow the replay after the next restart.
       */
      maxConsecutiveFailures: positiveInt.default(20),
    })
    .prefault({}),
  recovery: recoveryConfigSchema.prefault({}),
  shutdown: z
    .strictObject({
      /** How long each secondary may take to drain; what is unconfirmed stays a gap. */
      secondaryDrainMs: z.number().int().min(0).default(10_000),
    })
    .prefault({}),
});

export type PipelineConfig = z.output<typeof pipelineConfigSchema>;
export type PipelineConfigInput = z.input<typeof pipelineConfigSchema>;

export function parsePipelineConfig(input: unknown = {}, path = 'config'): PipelineConfig {
  return parseConfig(pipelineConfigSchema, input, path);
}

export function secondaryConfig(config: PipelineConfig, id: string): SecondaryConfig {
  return config.secondaries[id] ?? secondaryConfigSchema.parse({});
}
