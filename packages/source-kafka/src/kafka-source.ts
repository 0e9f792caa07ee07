import { KafkaAssignedSource } from './kafka-assigned-source.js';
import { KafkaGroupSource } from './kafka-group-source.js';
import {
  parseKafkaSourceOptions,
  type KafkaAssignedOptions,
  type KafkaGroupOptions,
  type KafkaSourceOptions,
} from './options.js';

/**
 * A Kafka source. `mode: 'group'` joins a consumer group and commits
 * positions to the broker (broker-managed); `mode: 'assigned'` reads a fixed
 * list of partitions whose positions the offset store keeps (store-managed).
 * The options are validated here; a refusal names the field.
 */
export function kafkaSource(options: KafkaGroupOptions): KafkaGroupSource;
export function kafkaSource(options: KafkaAssignedOptions): KafkaAssignedSource;
export function kafkaSource(options: KafkaSourceOptions): KafkaGroupSource | KafkaAssignedSource;
export function kafkaSource(options: KafkaSourceOptions): KafkaGroupSource | KafkaAssignedSource {
  const settings = parseKafkaSourceOptions(options);
  return settings.mode === 'group'
    ? new KafkaGroupSource(settings)
    : new KafkaAssignedSource(settings);
}
