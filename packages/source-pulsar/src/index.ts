export * from './errors.js';
export * from './pulsar-port.js';
export * from './message-id.js';
export * from './ws-port.js';
export {
  parseReaderOptions,
  parseSubscriptionOptions,
  type PulsarCommonOptions,
  type PulsarCommonSettings,
  type PulsarReaderOptions,
  type PulsarReaderSettings,
  type PulsarSubscriptionOptions,
  type PulsarSubscriptionSettings,
} from './options.js';
export { EVENT_TIME_HEADER, PUBLISH_TIME_HEADER } from './to-record.js';
export * from './pulsar-subscription-source.js';
export type {
  PulsarDroppedCommitReason,
  PulsarPartitionStats,
  PulsarSubscriptionStats,
} from './subscription-lane.js';
export * from './pulsar-reader-source.js';
export type { PulsarReaderStats } from './reader-lane.js';
export * from './pulsar-part.js';
