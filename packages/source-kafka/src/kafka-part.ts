import {
  ConfigError,
  memoryShare,
  type PartContext,
  type SourcePart,
} from '@thalweg/connector-core';
import { KafkaAssignedSource } from './kafka-assigned-source.js';
import { KafkaGroupSource } from './kafka-group-source.js';
import {
  DEFAULT_QUEUED_BYTES,
  parseKafkaSourceOptions,
  type KafkaAssignedOptions,
  type KafkaGroupOptions,
  type KafkaSourceSettings,
} from './options.js';

/**
 * A consumer-group member, declared: `kafkaSource`'s options without `log`.
 * `mode` may be left out: a `groupId` says it.
 */
export type KafkaGroupPartOptions = Omit<KafkaGroupOptions, 'log' | 'debug' | 'mode'> & {
  readonly mode?: 'group';
};
/**
 * A fixed list of partitions, declared: `kafkaSource`'s options without
 * `log`. `mode` may be left out: `partitions` says it.
 */
export type KafkaAssignedPartOptions = Omit<KafkaAssignedOptions, 'log' | 'debug' | 'mode'> & {
  readonly mode?: 'assigned';
};
export type KafkaPartOptions = KafkaGroupPartOptions | KafkaAssignedPartOptions;

/**
 * Declares a Kafka source; the topology opens it (`openTopology` in
 * `@thalweg/pipeline`). Its `cluster` is the topology's one declaration of
 * the cluster: every sink part is given it from here, to hash record ids
 * with.
 *
 * The options are validated here, a refusal naming the field
 * (`kafkaSource.groupId`). Opened, the source logs its settings through the
 * context's `debug`, and kafkajs lines (at `logLevel`, default none) and
 * operator events through its `info`. Without a `maxQueuedBytes`, it
 * queues at most a sixteenth of the topology's memory limit, at most 64 MiB.
 */
export function kafka(options: KafkaGroupPartOptions): SourcePart<KafkaGroupSource>;
export function kafka(options: KafkaAssignedPartOptions): SourcePart<KafkaAssignedSource>;
export function kafka(
  options: KafkaPartOptions,
): SourcePart<KafkaGroupSource | KafkaAssignedSource>;
export function kafka(
  options: KafkaPartOptions,
): SourcePart<KafkaGroupSource | KafkaAssignedSource> {
  // JavaScript callers bypass the types: look at the options as unknown data.
  const given: unknown = options;
  for (const key of ['log', 'debug']) {
    if (typeof given === 'object' && given !== null && key in given) {
      // Refused, not silently replaced by the topology's log.
      throw new ConfigError(
        `kafkaSource.${key}`,
        "is not an option of kafka(): it logs through the topology's log",
      );
    }
  }
  const mode = options.mode ?? ('partitions' in options ? 'assigned' : 'group');
  const settings = parseKafkaSourceOptions({ ...options, mode });
  // A bound not given follows the topology's memory limit, known at open.
  const queued = options.maxQueuedBytes;
  return {
    role: 'source',
    open: (context) =>
      openSource(
        {
          ...settings,
          maxQueuedBytes: queued ?? memoryShare(context.memoryLimitBytes, 16, DEFAULT_QUEUED_BYTES),
        },
        context,
      ),
  };
}

function openSource(
  settings: KafkaSourceSettings,
  context: PartContext,
): KafkaGroupSource | KafkaAssignedSource {
  const log = context.log.info;
  const debug = context.log.debug;
  return settings.mode === 'group'
    ? new KafkaGroupSource({ ...settings, log, debug })
    : new KafkaAssignedSource({ ...settings, log, debug });
}
