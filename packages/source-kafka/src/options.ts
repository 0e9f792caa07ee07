import { functionOption, parseConfig, type SourcePartition } from '@thalweg/connector-core';
import { z } from 'zod';
import type { ConsumerFactory, ConsumerSettings, KafkaLogLevel } from './consumer-port.js';
import type { DroppedCommit } from './commit-gate.js';

const MiB = 1024 * 1024;
/**
 * The fetched bytes a source queues when given no `maxQueuedBytes`. Declared
 * as a topology part, it takes a sixteenth of the topology's memory limit,
 * at most this (kafka-part.ts).
 */
export const DEFAULT_QUEUED_BYTES = 64 * MiB;
/** Node timers overflow above 2^31 - 1 ms; Kafka's int32 fields stop there too. */
const INT32_MAX = 0x7fffffff;

interface CommonOptions {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  /**
   * A stable name of the Kafka cluster, hashed into every record id (ADR
   * 0003). Required and never derived: a renamed or guessed cluster changes
   * every id, and a replay would no longer deduplicate.
   */
  readonly cluster: string;
  readonly clientId?: string;
  /** Where a partition with no committed offset (group) or no cursor (assigned) starts. Default true. */
  readonly fromBeginning?: boolean;
  /** Batches fetched but not yet yielded, before partitions are paused. Default 256. */
  readonly maxQueuedBatches?: number;
  /** Bytes (keys, values, headers) fetched but not yet yielded, before partitions are paused. Default 64 MiB. */
  readonly maxQueuedBytes?: number;
  /** kafkajs fetch knobs, passed through. */
  readonly maxBytes?: number;
  readonly maxBytesPerPartition?: number;
  readonly minBytes?: number;
  /**
   * Also how long kafkajs sleeps when every partition is paused (by flow
   * control or the prefetch bound), whatever resumes them meanwhile: 500 ms
   * by default, not kafkajs's 5 s, so a pause costs at most that much
   * fetching after it is lifted.
   */
  readonly maxWaitTimeInMs?: number;
  /** Group session knobs; the broker bounds sessionTimeout (group.min/max.session.timeout.ms). */
  readonly sessionTimeout?: number;
  readonly rebalanceTimeout?: number;
  readonly heartbeatInterval?: number;
  /** kafkajs log level; its lines go to `log`. Default `nothing` (kafkajs logs every retried error response). */
  readonly logLevel?: KafkaLogLevel;
  /**
   * How long connecting and subscribing may take before the source fails
   * with `TWG_KAFKA_BROKER_UNREACHABLE`, naming the brokers. Default 10 000 ms.
   */
  readonly connectTimeoutMs?: number;
  /** kafkajs lines and operator events. Default console.info. */
  readonly log?: (line: string) => void;
  /** The start-up knobs, one line each, for a debug log. Default: silent. */
  readonly debug?: (line: string) => void;
  /** The client seam; default `kafkajsConsumer`. */
  readonly kafka?: ConsumerFactory;
}

/** A member of a consumer group: the broker assigns partitions and holds the committed position. */
export interface KafkaGroupOptions extends CommonOptions {
  readonly mode: 'group';
  readonly topics: readonly string[];
  readonly groupId: string;
  /** Told about every commit that was not sent or not taken (also counted in stats). */
  readonly onDroppedCommit?: (dropped: DroppedCommit) => void;
}

/** A fixed list of partitions whose position lives in the thalweg offset store. */
export interface KafkaAssignedOptions extends CommonOptions {
  readonly mode: 'assigned';
  readonly partitions: readonly SourcePartition[];
}

export type KafkaSourceOptions = KafkaGroupOptions | KafkaAssignedOptions;

export interface CommonSettings {
  readonly brokers: readonly string[];
  readonly cluster: string;
  readonly clientId: string;
  readonly fromBeginning: boolean;
  readonly maxQueuedBatches: number;
  readonly maxQueuedBytes: number;
  readonly maxBytes: number;
  readonly maxBytesPerPartition: number;
  readonly minBytes: number;
  readonly maxWaitTimeInMs: number;
  readonly sessionTimeout: number;
  readonly rebalanceTimeout: number;
  readonly heartbeatInterval: number;
  readonly logLevel: KafkaLogLevel;
  readonly connectTimeoutMs: number;
  /** kafkajs lines and what the operator should hear (an `onDroppedCommit` that threw). */
  readonly log: (line: string) => void;
  /** The start-up lines, one per knob: `debug` for `kafkaSource` (silent by default), the topology's debug for a part. */
  readonly debug: (line: string) => void;
  readonly kafka: ConsumerFactory | undefined;
}

export interface KafkaGroupSettings extends CommonSettings {
  readonly mode: 'group';
  readonly topics: readonly string[];
  readonly groupId: string;
  readonly onDroppedCommit: ((dropped: DroppedCommit) => void) | undefined;
}

export interface KafkaAssignedSettings extends CommonSettings {
  readonly mode: 'assigned';
  readonly partitions: readonly SourcePartition[];
}

export type KafkaSourceSettings = KafkaGroupSettings | KafkaAssignedSettings;

/** The root of every option path of this source (the shared convention, parse-config.ts). */
const PATH = 'kafkaSource';
const LOG_LEVELS = [
  'nothing',
  'error',
  'warn',
  'info',
  'debug',
] as const satisfies readonly KafkaLogLevel[];
/** Kafka's own rule for topic names. */
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
const BROKER = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/;

const text = z
  .string({ error: 'must be a non-empty string' })
  .refine((v) => v.trim().length > 0, 'must be a non-empty string');

const int = (min: number, fallback: number) => {
  const reason = `must be an integer in [${min}, ${INT32_MAX}]`;
  return z
    .number({ error: reason })
    .int({ error: reason })
    .min(min, { error: reason })
    .max(INT32_MAX, { error: reason })
    .default(fallback);
};

const topicName = text.superRefine((name, ctx) => {
  if (!TOPIC_NAME.test(name)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${name}" is not a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)`,
    });
  }
});

const broker = text.superRefine((s, ctx) => {
  const m = BROKER.exec(s);
  if (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535) {
    ctx.addIssue({
      code: 'custom',
      message: `"${s}" is not "host:port" with a port in [1, 65535]`,
    });
  }
});

/** Refuses an entry listed twice, at the second one's index. */
function unique<T>(key: (v: T) => string, what: (k: string) => string) {
  return (list: readonly T[], ctx: z.RefinementCtx): void => {
    const seen = new Set<string>();
    list.forEach((v, i) => {
      const k = key(v);
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i], message: what(k) });
      seen.add(k);
    });
  };
}

/** An option of the other mode: named with why, rather than as merely unknown. */
const otherMode = (reason: string) => z.never({ error: reason }).optional();

// Brokers and cluster first: problems are reported in this order.
const commonShape = {
  brokers: z
    .array(broker, { error: 'must be a non-empty array of "host:port" strings' })
    .min(1, 'must be a non-empty array of "host:port" strings'),
  cluster: text,
  clientId: text.default('thalweg'),
  fromBeginning: z.boolean({ error: 'must be a boolean' }).default(true),
  maxQueuedBatches: int(1, 256),
  maxQueuedBytes: int(1, DEFAULT_QUEUED_BYTES),
  maxBytes: int(1, 10 * MiB),
  maxBytesPerPartition: int(1, MiB),
  minBytes: int(1, 1),
  maxWaitTimeInMs: int(0, 500),
  sessionTimeout: int(1, 30_000),
  rebalanceTimeout: int(1, 60_000),
  heartbeatInterval: int(1, 3_000),
  logLevel: z
    .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })
    .default('nothing'),
  connectTimeoutMs: int(1, 10_000),
  log: functionOption<(line: string) => void>().optional(),
  debug: functionOption<(line: string) => void>().optional(),
  kafka: functionOption<ConsumerFactory>().optional(),
};

const groupSchema = z.strictObject({
  ...commonShape,
  mode: z.literal('group'),
  topics: z
    .array(topicName, { error: 'must be a non-empty array of topic names' })
    .min(1, 'must be a non-empty array of topic names')
    .superRefine(
      unique(
        (t: string) => t,
        (t) => `"${t}" is listed twice`,
      ),
    ),
  groupId: text,
  onDroppedCommit: functionOption<(dropped: DroppedCommit) => void>().optional(),
  partitions: otherMode(
    'not used in group mode (group mode takes topics, assigned mode takes partitions)',
  ),
});

const partitionsShape = z
  .array(
    z.strictObject(
      {
        topic: topicName,
        partition: z
          .number({ error: 'must be a non-negative integer' })
          .int({ error: 'must be a non-negative integer' })
          .min(0, { error: 'must be a non-negative integer' }),
      },
      { error: 'must be { topic, partition }' },
    ),
    { error: 'must be a non-empty array of { topic, partition }' },
  )
  .min(1, 'must be a non-empty array of { topic, partition }')
  .superRefine(
    unique(
      (p: SourcePartition) => `${p.topic}/${p.partition}`,
      (k) => `${k} is listed twice`,
    ),
  );

const assignedSchema = z.strictObject({
  ...commonShape,
  mode: z.literal('assigned'),
  partitions: partitionsShape,
  groupId: otherMode('assigned mode reads in a throwaway group of its own; it takes no groupId'),
  topics: otherMode(
    'not used in assigned mode (group mode takes topics, assigned mode takes partitions)',
  ),
});

/**
 * The options as data: strict, so a misspelt knob never silently falls
 * back to its default, and every problem is reported at once.
 */
const kafkaSourceOptionsSchema = z
  .discriminatedUnion('mode', [groupSchema, assignedSchema], {
    error: 'must be "group" (consumer group) or "assigned" (fixed partitions)',
  })
  .superRefine((o, ctx) => {
    if (o.heartbeatInterval >= o.sessionTimeout) {
      ctx.addIssue({
        code: 'custom',
        path: ['heartbeatInterval'],
        message: `${o.heartbeatInterval} must be lower than sessionTimeout (${o.sessionTimeout}); about a third of it is usual`,
      });
    }
  });

/**
 * Validates the options of `kafkaSource` once, at the edge. A refusal is a
 * ConfigError naming the field (`kafkaSource.topics[1]`,
 * `kafkaSource.partitions[0].partition`) and the reason, with every other
 * problem appended.
 */
export function parseKafkaSourceOptions(input: unknown): KafkaSourceSettings {
  const o = parseConfig(kafkaSourceOptionsSchema, input, PATH);
  const log =
    o.log ??
    ((line: string) => {
      console.info(line);
    });
  const base: CommonSettings = {
    brokers: o.brokers,
    cluster: o.cluster,
    clientId: o.clientId,
    fromBeginning: o.fromBeginning,
    maxQueuedBatches: o.maxQueuedBatches,
    maxQueuedBytes: o.maxQueuedBytes,
    maxBytes: o.maxBytes,
    maxBytesPerPartition: o.maxBytesPerPartition,
    minBytes: o.minBytes,
    maxWaitTimeInMs: o.maxWaitTimeInMs,
    sessionTimeout: o.sessionTimeout,
    rebalanceTimeout: o.rebalanceTimeout,
    heartbeatInterval: o.heartbeatInterval,
    logLevel: o.logLevel,
    connectTimeoutMs: o.connectTimeoutMs,
    log,
    debug: o.debug ?? (() => undefined),
    kafka: o.kafka,
  };
  return o.mode === 'group'
    ? {
        ...base,
        mode: o.mode,
        topics: o.topics,
        groupId: o.groupId,
        onDroppedCommit: o.onDroppedCommit,
      }
    : { ...base, mode: o.mode, partitions: o.partitions };
}

/** One line per knob, for the start-up log. */
export function describeSettings(s: KafkaSourceSettings): string[] {
  const where =
    s.mode === 'group'
      ? [`groupId=${s.groupId}`, `topics=${s.topics.join(',')}`]
      : [`partitions=${s.partitions.map((x) => `${x.topic}/${x.partition}`).join(',')}`];
  return [
    `mode=${s.mode}`,
    `cluster=${s.cluster}`,
    `brokers=${s.brokers.join(',')}`,
    `clientId=${s.clientId}`,
    ...where,
    `fromBeginning=${s.fromBeginning}`,
    `maxQueuedBatches=${s.maxQueuedBatches}`,
    `maxQueuedBytes=${s.maxQueuedBytes}`,
    `maxBytes=${s.maxBytes}`,
    `maxBytesPerPartition=${s.maxBytesPerPartition}`,
    `minBytes=${s.minBytes}`,
    `maxWaitTimeInMs=${s.maxWaitTimeInMs}`,
    `sessionTimeout=${s.sessionTimeout}`,
    `rebalanceTimeout=${s.rebalanceTimeout}`,
    `heartbeatInterval=${s.heartbeatInterval}`,
    `logLevel=${s.logLevel}`,
    `connectTimeoutMs=${s.connectTimeoutMs}`,
  ];
}

/** What the client adapter is given: the client knobs, nothing of the source's own. */
export function consumerSettings(
  s: CommonSettings,
  groupId: string,
  assignment: ConsumerSettings['assignment'],
): ConsumerSettings {
  return {
    brokers: s.brokers,
    clientId: s.clientId,
    groupId,
    assignment,
    fromBeginning: s.fromBeginning,
    maxBytes: s.maxBytes,
    maxBytesPerPartition: s.maxBytesPerPartition,
    minBytes: s.minBytes,
    maxWaitTimeInMs: s.maxWaitTimeInMs,
    sessionTimeout: s.sessionTimeout,
    rebalanceTimeout: s.rebalanceTimeout,
    heartbeatInterval: s.heartbeatInterval,
    logLevel: s.logLevel,
    log: s.log,
  };
}
