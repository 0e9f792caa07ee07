import { ConfigError, type SourcePartition } from '@thalweg/connector-core';
import type { ConsumerFactory, ConsumerSettings, KafkaLogLevel } from './consumer-port.js';
import type { DroppedCommit } from './commit-gate.js';

const MiB = 1024 * 1024;
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
  readonly maxWaitTimeInMs?: number;
  /** Group session knobs; the broker bounds sessionTimeout (group.min/max.session.timeout.ms). */
  readonly sessionTimeout?: number;
  readonly rebalanceTimeout?: number;
  readonly heartbeatInterval?: number;
  /** kafkajs log level; its lines go to `log`. Default `nothing` (kafkajs logs every retried error response). */
  readonly logLevel?: KafkaLogLevel;
  /**
   * How long connecting and subscribing may take before the source fails
   * with `TWG_KAFKA_BROKER_UNREACHABLE`, naming the brokers (issue 13).
   * Default 10 000 ms.
   */
  readonly connectTimeoutMs?: number;
  /** Start-up knobs and kafkajs lines. Default console.info. */
  readonly log?: (line: string) => void;
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
  readonly log: (line: string) => void;
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

const COMMON_KEYS = [
  'mode',
  'brokers',
  'cluster',
  'clientId',
  'fromBeginning',
  'maxQueuedBatches',
  'maxQueuedBytes',
  'maxBytes',
  'maxBytesPerPartition',
  'minBytes',
  'maxWaitTimeInMs',
  'sessionTimeout',
  'rebalanceTimeout',
  'heartbeatInterval',
  'logLevel',
  'connectTimeoutMs',
  'log',
  'kafka',
] as const;
const GROUP_KEYS = new Set<string>([...COMMON_KEYS, 'topics', 'groupId', 'onDroppedCommit']);
const ASSIGNED_KEYS = new Set<string>([...COMMON_KEYS, 'partitions']);
const LOG_LEVELS: readonly KafkaLogLevel[] = ['nothing', 'error', 'warn', 'info', 'debug'];
/** Kafka's own rule for topic names. */
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
const BROKER = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):(\d{1,5})$/;

/** Collects every problem so a user fixes a configuration in one pass. */
class Problems {
  readonly list: { path: string; reason: string }[] = [];

  add(path: string, reason: string): void {
    this.list.push({ path, reason });
  }

  throwIfAny(): void {
    const [first, ...rest] = this.list;
    if (first === undefined) return;
    const more =
      rest.length === 0 ? '' : ` (also: ${rest.map((p) => `${p.path}: ${p.reason}`).join('; ')})`;
    throw new ConfigError(first.path, first.reason + more);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(p: Problems, path: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim().length === 0) {
    p.add(path, 'must be a non-empty string');
    return '';
  }
  return v;
}

function int(p: Problems, path: string, v: unknown, min: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > INT32_MAX) {
    p.add(path, `must be an integer in [${min}, ${INT32_MAX}]`);
    return fallback;
  }
  return v;
}

function topicName(p: Problems, path: string, v: unknown): string {
  const name = text(p, path, v);
  if (name !== '' && !TOPIC_NAME.test(name)) {
    p.add(path, `"${name}" is not a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)`);
  }
  return name;
}

/** Checks that `v` is absent or a function; its signature is the caller's type to state. */
function optionalFunction(p: Problems, path: string, v: unknown): unknown {
  if (v !== undefined && typeof v !== 'function') {
    p.add(path, 'must be a function');
    return undefined;
  }
  return v;
}

function brokers(p: Problems, v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0) {
    p.add('brokers', 'must be a non-empty array of "host:port" strings');
    return [];
  }
  return v.map((b: unknown, i) => {
    const at = `brokers[${i}]`;
    const s = text(p, at, b);
    const m = BROKER.exec(s);
    if (s !== '' && (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535)) {
      p.add(at, `"${s}" is not "host:port" with a port in [1, 65535]`);
    }
    return s;
  });
}

function topics(p: Problems, v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0) {
    p.add('topics', 'must be a non-empty array of topic names');
    return [];
  }
  const seen = new Set<string>();
  return v.map((t: unknown, i) => {
    const name = topicName(p, `topics[${i}]`, t);
    if (seen.has(name)) p.add(`topics[${i}]`, `"${name}" is listed twice`);
    seen.add(name);
    return name;
  });
}

function partitions(p: Problems, v: unknown): SourcePartition[] {
  if (!Array.isArray(v) || v.length === 0) {
    p.add('partitions', 'must be a non-empty array of { topic, partition }');
    return [];
  }
  const seen = new Set<string>();
  return v.map((entry: unknown, i) => {
    const at = `partitions[${i}]`;
    if (!isRecord(entry)) {
      p.add(at, 'must be { topic, partition }');
      return { topic: '', partition: 0 };
    }
    const topic = topicName(p, `${at}.topic`, entry['topic']);
    const partition = entry['partition'];
    if (typeof partition !== 'number' || !Number.isSafeInteger(partition) || partition < 0) {
      p.add(`${at}.partition`, 'must be a non-negative integer');
      return { topic, partition: 0 };
    }
    const key = `${topic}/${partition}`;
    if (seen.has(key)) p.add(at, `${key} is listed twice`);
    seen.add(key);
    return { topic, partition };
  });
}

function common(p: Problems, o: Record<string, unknown>): CommonSettings {
  const fromBeginning = o['fromBeginning'];
  if (fromBeginning !== undefined && typeof fromBeginning !== 'boolean') {
    p.add('fromBeginning', 'must be a boolean');
  }
  const logLevel = o['logLevel'] ?? 'nothing';
  if (!LOG_LEVELS.includes(logLevel as KafkaLogLevel)) {
    p.add('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const sessionTimeout = int(p, 'sessionTimeout', o['sessionTimeout'], 1, 30_000);
  const heartbeatInterval = int(p, 'heartbeatInterval', o['heartbeatInterval'], 1, 3_000);
  if (heartbeatInterval >= sessionTimeout) {
    p.add(
      'heartbeatInterval',
      `${heartbeatInterval} must be lower than sessionTimeout (${sessionTimeout}); about a third of it is usual`,
    );
  }
  const clientId = o['clientId'] === undefined ? 'thalweg' : text(p, 'clientId', o['clientId']);
  return {
    brokers: brokers(p, o['brokers']),
    cluster: text(p, 'cluster', o['cluster']),
    clientId,
    fromBeginning: fromBeginning !== false,
    maxQueuedBatches: int(p, 'maxQueuedBatches', o['maxQueuedBatches'], 1, 256),
    maxQueuedBytes: int(p, 'maxQueuedBytes', o['maxQueuedBytes'], 1, 64 * MiB),
    maxBytes: int(p, 'maxBytes', o['maxBytes'], 1, 10 * MiB),
    maxBytesPerPartition: int(p, 'maxBytesPerPartition', o['maxBytesPerPartition'], 1, MiB),
    minBytes: int(p, 'minBytes', o['minBytes'], 1, 1),
    maxWaitTimeInMs: int(p, 'maxWaitTimeInMs', o['maxWaitTimeInMs'], 0, 5_000),
    sessionTimeout,
    rebalanceTimeout: int(p, 'rebalanceTimeout', o['rebalanceTimeout'], 1, 60_000),
    heartbeatInterval,
    logLevel: logLevel as KafkaLogLevel,
    connectTimeoutMs: int(p, 'connectTimeoutMs', o['connectTimeoutMs'], 1, 10_000),
    log:
      (optionalFunction(p, 'log', o['log']) as ((line: string) => void) | undefined) ??
      ((line: string) => {
        console.info(line);
      }),
    kafka: optionalFunction(p, 'kafka', o['kafka']) as ConsumerFactory | undefined,
  };
}

/**
 * Validates the options of `kafkaSource` once, at the edge. A refusal is a
 * ConfigError naming the field (`topics[1]`, `partitions[0].partition`) and
 * the reason, with every other problem appended. Unknown fields are refused,
 * so a misspelt knob never silently falls back to its default.
 */
export function parseKafkaSourceOptions(input: unknown): KafkaSourceSettings {
  const p = new Problems();
  if (!isRecord(input)) throw new ConfigError('', 'options must be an object');
  const mode = input['mode'];
  if (mode !== 'group' && mode !== 'assigned') {
    throw new ConfigError(
      'mode',
      'must be "group" (consumer group) or "assigned" (fixed partitions)',
    );
  }
  const allowed = mode === 'group' ? GROUP_KEYS : ASSIGNED_KEYS;
  for (const [key, value] of Object.entries(input)) {
    // An absent option and one set to undefined are the same thing.
    if (allowed.has(key) || value === undefined) continue;
    const why =
      key === 'groupId'
        ? 'assigned mode reads in a throwaway group of its own; it takes no groupId'
        : key === 'partitions' || key === 'topics'
          ? `not used in ${mode} mode (group mode takes topics, assigned mode takes partitions)`
          : 'unknown option';
    p.add(key, why);
  }
  const base = common(p, input);
  if (mode === 'group') {
    const settings: KafkaGroupSettings = {
      ...base,
      mode,
      topics: topics(p, input['topics']),
      groupId: text(p, 'groupId', input['groupId']),
      onDroppedCommit: optionalFunction(p, 'onDroppedCommit', input['onDroppedCommit']) as
        ((d: DroppedCommit) => void) | undefined,
    };
    p.throwIfAny();
    return settings;
  }
  const settings: KafkaAssignedSettings = {
    ...base,
    mode,
    partitions: partitions(p, input['partitions']),
  };
  p.throwIfAny();
  return settings;
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
