import {
  ACCEPT_LOSS_WINDOW,
  DEFAULT_MEMORY_LIMIT_BYTES,
  flowControlConfigSchema,
  memoryShare,
  parseConfig,
  type LossWindowAcceptance,
  type FlowControlConfigInput,
  type LaneSettings,
} from '@thalweg/connector-core';
import { z } from 'zod';
import { dedupConfigSchema, type DedupConfigInput } from './dedup/dedup-config.js';
import { recoveryConfigSchema, type RecoveryConfigInput } from './recovery/recovery-config.js';

const positiveInt = z.number().int().positive();

/**
 * Per-secondary settings, keyed by the sink id under the pipeline's
 * `secondaries`: the lane settings a secondary part declares (connector-core).
 */
export type SecondaryConfigInput = LaneSettings;

/**
 * The validator of {@link SecondaryConfigInput}; each key's meaning and
 * default are documented there (a type test proves the two agree).
 */
export const secondaryConfigSchema = z.strictObject({
  allowNonDurable: z.boolean().default(false),
  maxQueuedBatches: positiveInt.default(256),
  // Resolved against the memory limit (secondaryConfig), not here.
  maxQueuedBytes: positiveInt.optional(),
});

/** A secondary's lane settings, resolved: the byte bound as declared, or from the memory limit. */
export type SecondaryConfig = Omit<z.output<typeof secondaryConfigSchema>, 'maxQueuedBytes'> & {
  readonly maxQueuedBytes: number;
};

/** The pipeline's `memoryLimitBytes` when it sets none. */
export { DEFAULT_MEMORY_LIMIT_BYTES };
/** The most a secondary lane holds, in bytes, when its part declares no bound. */
export const MAX_DEFAULT_LANE_BYTES = 64 * 1024 * 1024;

/**
 * A secondary lane's byte bound when its part declares none: a sixteenth of
 * the memory limit, at most 64 MiB (`memoryShare`). Each lane's queue is
 * memory flow control cannot shed by reading less, so its share follows the
 * limit the user set (64 MiB at the default 1 GiB, 32 MiB at 512 MiB).
 */
export function defaultLaneBytes(memoryLimitBytes: number): number {
  return memoryShare(memoryLimitBytes, 16, MAX_DEFAULT_LANE_BYTES);
}

/** Resolves a secondary's declared lane settings against the pipeline's memory limit. */
export function resolveLaneSettings(
  input: SecondaryConfigInput = {},
  memoryLimitBytes = DEFAULT_MEMORY_LIMIT_BYTES,
): SecondaryConfig {
  const own = secondaryConfigSchema.parse(input);
  return { ...own, maxQueuedBytes: own.maxQueuedBytes ?? defaultLaneBytes(memoryLimitBytes) };
}

/**
 * Everything about a pipeline that is plain data, validated once at start
 * (a refusal names the path of the bad field). The sinks and the source are
 * objects and are checked by their descriptors (see `validateTopology`); this
 * covers the knobs. Every key has a default, so `{}` is a complete
 * configuration.
 */
export interface PipelineConfigInput {
  /**
   * `batch`: the position advances to a batch's end once the whole batch is
   * durable; a partial failure replays the batch, and the record id absorbs
   * what had landed. `record`: every record is its own span, for streams that
   * cannot afford a whole-batch replay.
   * @defaultValue 'batch'
   */
  granularity?: 'batch' | 'record' | undefined;
  /**
   * Largest number of records submitted to raw as one span.
   * @defaultValue 10000
   */
  maxBatchRecords?: number | undefined;
  /**
   * Largest number of bytes submitted to raw as one span.
   * @defaultValue 8388608 (8 MiB)
   */
  maxBatchBytes?: number | undefined;
  /**
   * A record larger than this, in bytes, is written to raw (raw keeps
   * everything) but goes to quarantine with reason `oversized` instead of to
   * the secondaries.
   * @defaultValue 4194304 (4 MiB)
   */
  maxRecordBytes?: number | undefined;
  /**
   * Per-secondary settings, keyed by the sink id; a secondary not listed
   * gets every default.
   * @defaultValue `{}`
   */
  secondaries?: Record<string, SecondaryConfigInput> | undefined;
  /** Backpressure, stuck detection, the byte budget and the quarantine lane's bounds. */
  flowControl?: FlowControlConfigInput | undefined;
  /**
   * The memory the pipeline may hold, in bytes; the memory ratio flow control
   * reads is the V8 heap in use plus array buffers over this (ADR 0041), so
   * leave the process's fixed overhead (code, reserved heap, other threads)
   * between it and a container's limit. A secondary lane that declares no
   * `maxQueuedBytes` holds at most a sixteenth of it (at most 64 MiB).
   * @defaultValue 1073741824 (1 GiB)
   */
  memoryLimitBytes?: number | undefined;
  /**
   * How often flow control is evaluated and pending positions committed, in ms.
   * @defaultValue 200
   */
  evaluateEveryMs?: number | undefined;
  /** How the source position is committed. */
  commit?: CommitConfigInput | undefined;
  /** The role (ingest, recovery or both) and how gaps are replayed from raw. */
  recovery?: RecoveryConfigInput | undefined;
  /** How the pipeline stops. */
  shutdown?: ShutdownConfigInput | undefined;
  /**
   * Runs a non-replayable source whose producer cannot resume (an IPC or
   * Flight stream without a resume handshake), which is refused otherwise.
   * The value states what is accepted: every record received and not yet
   * durable in raw when the process dies is lost, since nothing upstream
   * keeps it. `stats().source.lossWindowRecords` (and the
   * `thalweg_source_loss_window_records` gauge) count that window as it stands.
   * @defaultValue `undefined`: such a source is refused
   */
  acceptLossWindow?: LossWindowAcceptance | undefined;
  /**
   * Opt-in content dedup, keyed by the source stream (topic) it applies to
   * (ADR 0036): upstream duplicates are kept from the secondaries, never
   * from raw. Each stream must declare a natural key or a uniqueness
   * guarantee, and the spec must give a `coordination` of mode 1, 3, 5 or 7.
   * @defaultValue `{}`: no stream is deduplicated
   */
  dedup?: Record<string, DedupConfigInput> | undefined;
}

/** How the source position is committed. */
export interface CommitConfigInput {
  /**
   * Consecutive failed position commits after which the pipeline stops. A
   * position that cannot be committed pins the source; carrying on would
   * only grow the replay after the next restart.
   * @defaultValue 20
   */
  maxConsecutiveFailures?: number | undefined;
}

/** How the pipeline stops. */
export interface ShutdownConfigInput {
  /**
   * How long each secondary may take to drain, in ms; what is unconfirmed
   * stays a gap.
   * @defaultValue 10000
   */
  secondaryDrainMs?: number | undefined;
}

/**
 * The validator of {@link PipelineConfigInput}; each key's meaning and
 * default are documented there (a type test proves the two agree).
 */
export const pipelineConfigSchema = z.strictObject({
  granularity: z.enum(['batch', 'record']).default('batch'),
  maxBatchRecords: positiveInt.default(10_000),
  maxBatchBytes: positiveInt.default(8 * 1024 * 1024),
  maxRecordBytes: positiveInt.default(4 * 1024 * 1024),
  secondaries: z.record(z.string(), secondaryConfigSchema).default({}),
  flowControl: flowControlConfigSchema.prefault({}),
  memoryLimitBytes: positiveInt.default(DEFAULT_MEMORY_LIMIT_BYTES),
  evaluateEveryMs: positiveInt.default(200),
  commit: z
    .strictObject({
      maxConsecutiveFailures: positiveInt.default(20),
    })
    .prefault({}),
  recovery: recoveryConfigSchema.prefault({}),
  shutdown: z
    .strictObject({
      secondaryDrainMs: z.number().int().min(0).default(10_000),
    })
    .prefault({}),
  acceptLossWindow: z.literal(ACCEPT_LOSS_WINDOW).optional(),
  dedup: z.record(z.string(), dedupConfigSchema).default({}),
});

export type PipelineConfig = z.output<typeof pipelineConfigSchema>;

export function parsePipelineConfig(input: unknown = {}, path = 'config'): PipelineConfig {
  return parseConfig(pipelineConfigSchema, input, path);
}

export function secondaryConfig(config: PipelineConfig, id: string): SecondaryConfig {
  return resolveLaneSettings(config.secondaries[id], config.memoryLimitBytes);
}
