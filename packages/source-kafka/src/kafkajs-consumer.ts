import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type logCreator } from 'kafkajs';
import type { SourcePartition } from '@thalweg/connector-core';
import { classifyCommitError } from './commit-error.js';
import type {
  CommitOffset,
  CommitResult,
  ConsumerFactory,
  ConsumerPort,
  KafkaLogLevel,
} from './consumer-port.js';
import { announcingRoundRobin, pinnedAssigner } from './kafkajs-assigners.js';
import { installWireHeaders, wireHeaders } from './kafkajs-headers.js';
import { OUT_OF_RANGE_RESET, PositionWatch } from './kafkajs-position-watch.js';
import { KafkaSourceError, topicUnknown } from './errors.js';

const LEVEL: Record<KafkaLogLevel, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

const LABEL: Record<number, string> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

const LOG_ENVELOPE = new Set(['message', 'timestamp', 'logger']);

const APPLIED: CommitResult = Object.freeze({ kind: 'applied' });

function json(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '[unserialisable]';
  }
}

/**
 * kafkajs lines go to the source's `log`, one line each, never to stdout
 * directly, up to the level asked for; every entry, whatever its level, is
 * shown to `watch` first.
 */
function routeLogs(
  log: (line: string) => void,
  upTo: logLevel,
  watch: (level: logLevel, fields: Record<string, unknown>) => void,
): logCreator {
  return () =>
    ({ namespace, level, log: content }) => {
      // At run time the entry is { timestamp, logger, message, ...fields }.
      const fields = content as unknown as Record<string, unknown>;
      watch(level, fields);
      if (level > upTo) return;
      const extra = Object.fromEntries(
        Object.entries(fields).filter(([k]) => !LOG_ENVELOPE.has(k)),
      );
      const rest = Object.keys(extra).length === 0 ? '' : ` ${json(extra)}`;
      log(
        `kafkajs ${LABEL[level] ?? String(level)} [${namespace}] ${String(fields['message'])}${rest}`,
      );
    };
}

function byTopic(
  partitions: readonly SourcePartition[],
): { topic: string; partitions: number[] }[] {
  const topics = new Map<string, number[]>();
  for (const p of partitions) {
    const list = topics.get(p.topic);
    if (list === undefined) topics.set(p.topic, [p.partition]);
    else list.push(p.partition);
  }
  return [...topics].map(([topic, list]) => ({ topic, partitions: list }));
}

/** Whether a COMMIT_OFFSETS payload carries every offset we asked for. */
function covers(topics: unknown, offsets: readonly CommitOffset[]): boolean {
  if (!Array.isArray(topics)) return false;
  const sent = new Set<string>();
  for (const t of topics as { topic?: unknown; partitions?: unknown }[]) {
    if (!Array.isArray(t.partitions)) continue;
    for (const p of t.partitions as { partition?: unknown; offset?: unknown }[]) {
      sent.add(`${String(t.topic)}\u0000${String(p.partition)}\u0000${String(p.offset)}`);
    }
  }
  return offsets.every((o) => sent.has(`${o.topic}\u0000${o.partition}\u0000${o.next}`));
}

/**
 * The error for a subscription the cluster refused with "This server does
 * not host this topic-partition", naming the topics it does not have (asked
 * of the cluster; if that fails too, every subscribed topic is named).
 */
async function unknownTopics(
  kafka: Kafka,
  topics: readonly string[],
  brokers: readonly string[],
  cause: unknown,
): Promise<KafkaSourceError> {
  let missing: readonly string[] = [];
  const admin = kafka.admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    missing = topics.filter((t) => !existing.has(t));
  } catch {
    // Every subscribed topic stays the suspect: the refusal itself stands.
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  return topicUnknown(missing, topics, brokers, 'allowAutoTopicCreation', cause);
}

/**
 * The real client: a kafkajs consumer adapted to `ConsumerPort`.
 *
 * - Manual commits only (`autoCommit: false`); `eachBatchAutoResolve` lets
 *   kafkajs move its fetch position past each batch once handed over.
 * - `allowAutoTopicCreation: false`: a misspelt topic fails the subscription
 *   instead of creating a topic.
 * - Reads committed records only (aborted transactions are filtered; their
 *   offsets still reach the source as a `filtered-batch`).
 * - A commit is `applied` only if kafkajs reported sending it: when its
 *   runner is not running, `commitOffsets` resolves having sent nothing.
 * - Headers are handed on in wire order, repeats and prototype names
 *   included (kafkajs-headers.ts), not as kafkajs's folded object.
 */
export const kafkajsConsumer: ConsumerFactory = (settings, emit) => {
  installWireHeaders();
  const positions = new PositionWatch();
  const watch = (level: logLevel, fields: Record<string, unknown>) => {
    if (level !== logLevel.ERROR || fields['message'] !== OUT_OF_RANGE_RESET) return;
    const { topic, partition } = fields;
    if (typeof topic !== 'string' || typeof partition !== 'number') return;
    const p = { topic, partition };
    if (!positions.lose(p)) return;
    void positions.refusal(kafka, settings.groupId, p).then((error) => {
      emit({ kind: 'crashed', error, restart: false });
    });
  };
  const upTo = LEVEL[settings.logLevel];
  const kafka = new Kafka({
    clientId: settings.clientId,
    brokers: [...settings.brokers],
    // ERROR at least, whatever the source logs: the out-of-range reset is only ever logged.
    logLevel: upTo === logLevel.NOTHING ? logLevel.ERROR : upTo,
    logCreator: routeLogs(settings.log, upTo, watch),
  });
  const announce = () => {
    emit({ kind: 'join-starting' });
  };
  const assignment = settings.assignment;
  const assigner =
    assignment.kind === 'group'
      ? announcingRoundRobin(announce)
      : pinnedAssigner(assignment.partitions, randomUUID(), announce);
  const topics =
    assignment.kind === 'group'
      ? [...assignment.topics]
      : [...new Set(assignment.partitions.map((p) => p.topic))];
  const consumer = kafka.consumer({
    groupId: settings.groupId,
    partitionAssigners: [assigner],
    sessionTimeout: settings.sessionTimeout,
    rebalanceTimeout: settings.rebalanceTimeout,
    heartbeatInterval: settings.heartbeatInterval,
    maxBytes: settings.maxBytes,
    maxBytesPerPartition: settings.maxBytesPerPartition,
    minBytes: settings.minBytes,
    maxWaitTimeInMs: settings.maxWaitTimeInMs,
    allowAutoTopicCreation: false,
    readUncommitted: false,
  });

  let watchCommits: ((topics: unknown) => void) | undefined;
  const events = consumer.events;
  consumer.on(events.GROUP_JOIN, ({ payload }) => {
    const assigned = Object.entries(payload.memberAssignment).flatMap(([topic, list]) =>
      list.map((partition) => ({ topic, partition })),
    );
    emit({ kind: 'joined', assignment: assigned });
  });
  consumer.on(events.REBALANCING, () => {
    emit({ kind: 'rebalancing' });
  });
  consumer.on(events.FETCH_START, () => {
    emit({ kind: 'fetching' });
  });
  consumer.on(events.CRASH, ({ payload }) => {
    emit({ kind: 'crashed', error: payload.error, restart: payload.restart });
  });
  consumer.on(events.START_BATCH_PROCESS, ({ payload }) => {
    // kafkajs reports a fetch of only filtered records here and never calls
    // eachBatch for it; batchSize 0 is that case and only that case.
    if (payload.batchSize !== 0) return;
    const from = { topic: payload.topic, partition: payload.partition };
    if (!positions.deliver(from, BigInt(payload.lastOffset))) return;
    const first: unknown = payload.firstOffset;
    emit({
      kind: 'filtered-batch',
      batch: {
        topic: payload.topic,
        partition: payload.partition,
        firstOffset: typeof first === 'string' ? first : null,
        lastOffset: payload.lastOffset,
        highWatermark: payload.highWatermark,
        kind: 'messages',
        messages: [],
      },
    });
  });
  consumer.on(events.COMMIT_OFFSETS, ({ payload }) => {
    watchCommits?.(payload.topics);
  });

  const port: ConsumerPort = {
    connect: () => consumer.connect(),
    subscribe: async () => {
      try {
        await consumer.subscribe({ topics, fromBeginning: settings.fromBeginning });
      } catch (error) {
        if ((error as { type?: unknown }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error;
        throw await unknownTopics(kafka, topics, settings.brokers, error);
      }
    },
    run: (onBatch) =>
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        partitionsConsumedConcurrently: 1,
        eachBatch: async ({ batch }) => {
          const from = { topic: batch.topic, partition: batch.partition };
          if (!positions.deliver(from, BigInt(batch.lastOffset()))) return;
          onBatch({
            topic: batch.topic,
            partition: batch.partition,
            firstOffset: batch.firstOffset(),
            lastOffset: batch.lastOffset(),
            highWatermark: batch.highWatermark,
            kind: 'messages',
            messages: batch.messages.map((m) => ({
              offset: m.offset,
              key: m.key ?? null,
              value: m.value,
              timestamp: m.timestamp,
              headers: wireHeaders(m.headers),
            })),
          });
        },
      }),
    commit: async (offsets) => {
      const seen = { applied: false };
      watchCommits = (sent) => {
        seen.applied ||= covers(sent, offsets);
      };
      try {
        await consumer.commitOffsets(
          offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.next) })),
        );
      } catch (error) {
        const known = classifyCommitError(error);
        if (known !== null) return known;
        throw error;
      } finally {
        watchCommits = undefined;
      }
      return seen.applied
        ? APPLIED
        : {
            kind: 'not-running',
            detail: 'kafkajs returned without sending the commit (its fetch loop is not running)',
          };
    },
    seek: (p, offset) => {
      positions.sought(p, BigInt(offset));
      consumer.seek({ topic: p.topic, partition: p.partition, offset: String(offset) });
    },
    pause: (partitions) => {
      consumer.pause(byTopic(partitions));
    },
    resume: (partitions) => {
      consumer.resume(byTopic(partitions));
    },
    disconnect: () => consumer.disconnect(),
  };
  return port;
};
