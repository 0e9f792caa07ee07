import {
  kafkajsConsumer,
  platformaticConsumer,
  platformaticSupported,
  type ConsumerFactory,
} from '../src/index.js';

export interface Client {
  readonly name: string;
  readonly factory: ConsumerFactory;
}

/**
 * The Kafka clients behind `ConsumerPort` that this runtime can run: kafkajs
 * everywhere, @platformatic/kafka on Node 22+ (CI's Node 24 run; on Node 20
 * its refusal is tested in platformatic.contract.int.test.ts).
 */
export const CLIENTS: readonly Client[] = [
  { name: 'kafkajs', factory: kafkajsConsumer },
  ...(platformaticSupported()
    ? [{ name: '@platformatic/kafka', factory: platformaticConsumer }]
    : []),
];
