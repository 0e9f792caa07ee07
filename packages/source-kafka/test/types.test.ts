import { describe, expect, it } from 'vitest';
import type { BrokerManagedSource, Source, StoreManagedSource } from '@thalweg/connector-core';
import { kafkaSource, type ConsumerFactory, type KafkaSourceOptions } from '../src/index.js';
import { FakeConsumer } from './fake-consumer.js';
import { quiet } from './helpers.js';

// The mode decides the position regime, and the compiler knows it: a group
// member cannot be handed to code that stores cursors, an assigned source
// has nothing to commit to Kafka. (tsc -b checks the expectations below.)

const base = { brokers: ['127.0.0.1:9092'], cluster: 'c', log: quiet };

function build(kafka: ConsumerFactory) {
  const group = kafkaSource({ ...base, mode: 'group', topics: ['t'], groupId: 'g', kafka });
  const assigned = kafkaSource({
    ...base,
    mode: 'assigned',
    partitions: [{ topic: 't', partition: 0 }],
    kafka,
  });
  return { group, assigned };
}

describe('regimes at the type level', () => {
  it('a group source is broker-managed and an assigned source store-managed', () => {
    const { group, assigned } = build(FakeConsumer.factory().factory);
    const broker: BrokerManagedSource = group;
    const store: StoreManagedSource = assigned;
    const either: Source[] = [group, assigned];
    // @ts-expect-error a group member keeps no cursor in the offset store
    const notStore: StoreManagedSource = group;
    // @ts-expect-error an assigned source commits nothing to Kafka
    const notBroker: BrokerManagedSource = assigned;
    expect([broker.regime, store.regime, either.length]).toEqual([
      'broker-managed',
      'store-managed',
      2,
    ]);
    expect([notStore.regime, notBroker.regime]).toEqual(['broker-managed', 'store-managed']);
  });

  it('options of one mode do not type-check in the other', () => {
    const wrong = () =>
      // @ts-expect-error group mode takes topics, assigned mode partitions
      kafkaSource({
        ...base,
        mode: 'group',
        topics: ['t'],
        groupId: 'g',
        partitions: [{ topic: 't', partition: 0 }],
      });
    // @ts-expect-error an assigned source needs its partitions
    const missing: KafkaSourceOptions = { ...base, mode: 'assigned' };
    expect(wrong).toThrow(/partitions: not used in group mode/);
    expect(() => kafkaSource(missing)).toThrow(/partitions: must be a non-empty array/);
  });
});
