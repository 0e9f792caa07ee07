export * from './errors.js';
export { kafkaSource } from './kafka-source.js';
export { KafkaGroupSource, type KafkaGroupStats } from './kafka-group-source.js';
export { KafkaAssignedSource, type KafkaAssignedStats } from './kafka-assigned-source.js';
export type { KafkaReadStats } from './kafka-read-stats.js';
export type {
  CommitOutcome,
  CommitStats,
  DroppedCommit,
  DroppedCommitReason,
} from './commit-gate.js';
export {
  parseKafkaSourceOptions,
  type KafkaAssignedOptions,
  type KafkaAssignedSettings,
  type KafkaGroupOptions,
  type KafkaGroupSettings,
  type KafkaSourceOptions,
  type KafkaSourceSettings,
} from './options.js';
export type * from './consumer-port.js';
export { kafkajsConsumer } from './kafkajs-consumer.js';
export {
  kafka,
  type KafkaAssignedPartOptions,
  type KafkaGroupPartOptions,
  type KafkaPartOptions,
} from './kafka-part.js';
export { platformaticConsumer } from './platformatic-consumer.js';
export { platformaticSupported } from './platformatic-runtime.js';
