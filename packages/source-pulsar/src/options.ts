import {
  functionOption,
  objectWith,
  parseConfig,
  timerScheduler,
  type BackoffPolicy,
  type Scheduler,
} from '@thalweg/connector-core';
import { z } from 'zod';
import { checkOffsetLayout, DEFAULT_OFFSET_LAYOUT, type OffsetLayout } from './message-id.js';
import type { PulsarPort, SubscriptionType } from './pulsar-port.js';

const PATH = 'pulsarSource';
const MiB = 1024 * 1024;
/** The WebSocket API caps a receiver queue at 1000 (the proxy's limit): a session's share never exceeds it. */
export const MAX_SESSION_SHARE = 1000;

/** What both regimes take. */
export interface PulsarCommonOptions {
  /** The client (ADR 0032). The source owns it and closes it on close. */
  readonly port: PulsarPort;
  /** A stable name of the Pulsar cluster, hashed into every record id (ADR 0003). */
  readonly cluster: string;
  /** Full topic names, `persistent://tenant/ns/name`; a partitioned topic is named without `-partition-N`. */
  readonly topics: readonly string[];
  /** The message-id packing (ADR 0032); fixed for the life of a raw. Default entry 17, batch 10 bits. */
  readonly offsetBits?: OffsetLayout;
  /** Batches received but not yet yielded, before partitions are paused. Default 64. */
  readonly maxQueuedBatches?: number;
  /** Bytes (keys, values, headers) received but not yet yielded, before partitions are paused. Default 16 MiB. */
  readonly maxQueuedBytes?: number;
  /** Messages per batch at most. Default 500. */
  readonly maxBatchMessages?: number;
  /**
   * How long a batch not yet full waits for more messages before it is
   * yielded (the broker sends one message per frame). Default 5 ms; 0 yields
   * what the same read brought.
   */
  readonly lingerMs?: number;
  /** How often partition counts are read again, to pick up partitions added while running; 0: never. Default 30 000. */
  readonly partitionPollMs?: number;
  /** The backoff before a closed session is opened again. Default 100 ms doubling to 10 s. */
  readonly reconnect?: BackoffPolicy;
  /** Where the poll and the reconnects are scheduled; default Node's timers. Tests pass a ManualClock. */
  readonly scheduler?: Scheduler;
  /** Operator events (sessions closed and reopened, epoch resets). Default console.info. */
  readonly log?: (line: string) => void;
  /** The start-up knobs, one line each. Default: silent. */
  readonly debug?: (line: string) => void;
}

/** A subscription (broker-managed): the broker keeps what was acknowledged. */
export interface PulsarSubscriptionOptions extends PulsarCommonOptions {
  readonly subscription: string;
  /** Default Exclusive. */
  readonly type?: SubscriptionType;
  /** Where a new subscription starts. Default Earliest. */
  readonly initialPosition?: 'Earliest' | 'Latest';
}

/** Readers (store-managed): the offset store keeps a message-id cursor per partition. */
export interface PulsarReaderOptions extends PulsarCommonOptions {
  /** Where a partition with no stored cursor starts. Default earliest. */
  readonly startAt?: 'earliest' | 'latest';
}

export interface PulsarCommonSettings {
  readonly port: PulsarPort;
  readonly cluster: string;
  readonly topics: readonly string[];
  readonly offsetBits: OffsetLayout;
  readonly maxQueuedBatches: number;
  readonly maxQueuedBytes: number;
  readonly maxBatchMessages: number;
  readonly lingerMs: number;
  readonly partitionPollMs: number;
  readonly reconnect: BackoffPolicy;
  readonly scheduler: Scheduler;
  readonly log: (line: string) => void;
  readonly debug: (line: string) => void;
}

export interface PulsarSubscriptionSettings extends PulsarCommonSettings {
  readonly subscription: string;
  readonly type: SubscriptionType;
  readonly initialPosition: 'Earliest' | 'Latest';
}

export interface PulsarReaderSettings extends PulsarCommonSettings {
  readonly startAt: 'earliest' | 'latest';
}

const text = z.string({ error: 'must be a non-empty string' }).min(1, 'must be a non-empty string');
const int = (min: number, max: number, fallback: number) =>
  z
    .number({ error: `must be an integer in [${min}, ${max}]` })
    .int({ error: `must be an integer in [${min}, ${max}]` })
    .min(min, { error: `must be an integer in [${min}, ${max}]` })
    .max(max, { error: `must be an integer in [${min}, ${max}]` })
    .default(fallback);

const TOPIC = /^(persistent|non-persistent):\/\/[^/\s]+\/[^/\s]+\/[^/\s]+$/;
const topicName = text.superRefine((t, ctx) => {
  if (!TOPIC.test(t)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${t}" is not a full topic name (persistent://tenant/namespace/topic)`,
    });
  } else if (/-partition-\d+$/.test(t)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${t}" names one partition: name the topic, and every partition is read`,
    });
  }
});

const commonShape = {
  port: objectWith<PulsarPort>('subscribe', 'a PulsarPort'),
  cluster: text,
  topics: z
    .array(topicName, { error: 'must be a non-empty array of topic names' })
    .min(1, 'must be a non-empty array of topic names')
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((t, i) => {
        if (seen.has(t))
          ctx.addIssue({ code: 'custom', path: [i], message: `"${t}" is listed twice` });
        seen.add(t);
      });
    }),
  offsetBits: z
    .strictObject(
      { entryBits: z.number(), batchBits: z.number() },
      { error: 'must be { entryBits, batchBits }' },
    )
    .superRefine((layout, ctx) => {
      try {
        checkOffsetLayout(layout);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    })
    .default(DEFAULT_OFFSET_LAYOUT),
  maxQueuedBatches: int(1, 65_536, 64),
  maxQueuedBytes: int(1, 1024 * MiB, 16 * MiB),
  maxBatchMessages: int(1, 10_000, 500),
  lingerMs: int(0, 1_000, 5),
  partitionPollMs: int(0, 0x7fffffff, 30_000),
  reconnect: z
    .strictObject({
      baseDelayMs: int(1, 0x7fffffff, 100),
      maxDelayMs: int(1, 0x7fffffff, 10_000),
    })
    .default({ baseDelayMs: 100, maxDelayMs: 10_000 }),
  scheduler: objectWith<Scheduler>('after', 'a Scheduler').optional(),
  log: functionOption<(line: string) => void>().optional(),
  debug: functionOption<(line: string) => void>().optional(),
};

const subscriptionSchema = z.strictObject({
  ...commonShape,
  subscription: text,
  type: z
    .enum(['Exclusive', 'Failover', 'Shared', 'Key_Shared'], {
      error: 'must be one of Exclusive, Failover, Shared, Key_Shared',
    })
    .default('Exclusive'),
  initialPosition: z
    .enum(['Earliest', 'Latest'], { error: 'must be Earliest or Latest' })
    .default('Earliest'),
});

const readerSchema = z.strictObject({
  ...commonShape,
  startAt: z
    .enum(['earliest', 'latest'], { error: 'must be earliest or latest' })
    .default('earliest'),
});

function common(o: z.output<typeof subscriptionSchema> | z.output<typeof readerSchema>) {
  return {
    port: o.port,
    cluster: o.cluster,
    topics: o.topics,
    offsetBits: o.offsetBits,
    maxQueuedBatches: o.maxQueuedBatches,
    maxQueuedBytes: o.maxQueuedBytes,
    maxBatchMessages: o.maxBatchMessages,
    lingerMs: o.lingerMs,
    partitionPollMs: o.partitionPollMs,
    reconnect: o.reconnect,
    scheduler: o.scheduler ?? timerScheduler,
    log:
      o.log ??
      ((line: string) => {
        console.info(line);
      }),
    debug: o.debug ?? (() => undefined),
  };
}

/** Validates a subscription's options; a refusal is a ConfigError naming `pulsarSource.<field>`. */
export function parseSubscriptionOptions(input: unknown): PulsarSubscriptionSettings {
  const o = parseConfig(subscriptionSchema, input, PATH);
  return {
    ...common(o),
    subscription: o.subscription,
    type: o.type,
    initialPosition: o.initialPosition,
  };
}

/** Validates the readers' options; a refusal is a ConfigError naming `pulsarSource.<field>`. */
export function parseReaderOptions(input: unknown): PulsarReaderSettings {
  const o = parseConfig(readerSchema, input, PATH);
  return { ...common(o), startAt: o.startAt };
}

/** One line per knob, for the start-up log. */
export function describeSettings(
  s: PulsarCommonSettings,
  own: readonly string[],
): readonly string[] {
  return [
    `cluster=${s.cluster}`,
    `topics=${s.topics.join(',')}`,
    ...own,
    `offsetBits=entry ${s.offsetBits.entryBits}, batch ${s.offsetBits.batchBits}`,
    `maxQueuedBatches=${s.maxQueuedBatches}`,
    `maxQueuedBytes=${s.maxQueuedBytes}`,
    `maxBatchMessages=${s.maxBatchMessages}`,
    `lingerMs=${s.lingerMs}`,
    `partitionPollMs=${s.partitionPollMs}`,
    `reconnect=${s.reconnect.baseDelayMs}..${s.reconnect.maxDelayMs} ms`,
  ];
}

/**
 * Each session's share of the prefetch bound, in messages: the bound
 * (batches times messages per batch) over the partitions read, at least 1
 * and at most the WebSocket API's receiver queue.
 */
export function sessionShare(s: PulsarCommonSettings, partitions: number): number {
  const bound = s.maxQueuedBatches * s.maxBatchMessages;
  return Math.max(1, Math.min(MAX_SESSION_SHARE, Math.floor(bound / Math.max(1, partitions))));
}
