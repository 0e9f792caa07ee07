import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Changes, kafkaBrokers, uniqueName } from '@thalweg/test-services';
import { kafkajsConsumer, type ConsumerEvent, type ConsumerSettings } from '../src/index.js';
import { fetchedCount } from '../src/consumer-port.js';
import { FAST, KafkaFixture } from './helpers.js';

const fx = new KafkaFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

function settings(topic: string, groupId: string): ConsumerSettings {
  return {
    ...FAST,
    brokers: kafkaBrokers(),
    clientId: 'twg-port-test',
    groupId,
    assignment: { kind: 'group', topics: [topic] },
    fromBeginning: true,
    maxBytes: 1 << 20,
    maxBytesPerPartition: 1 << 20,
    minBytes: 1,
    logLevel: 'nothing',
  };
}

describe('kafkajsConsumer', () => {
  it('reports the join in order, and a commit kafkajs resolves without sending it as not-running', async () => {
    const topic = await fx.topic(1);
    await fx.sendNumbered(topic, 1, 0, 3);
    const groupId = uniqueName('twg-port');
    const events: ConsumerEvent['kind'][] = [];
    const port = kafkajsConsumer(settings(topic, groupId), (e) => {
      if (events[events.length - 1] !== e.kind) events.push(e.kind);
    });
    await port.connect();
    await port.subscribe();
    let read = 0;
    const changes = new Changes();
    await port.run((batch) => {
      read += fetchedCount(batch);
      changes.poke();
    });
    await changes.until(() => read >= 3, 'the 3 messages read');
    expect(events.slice(0, 3)).toEqual(['join-starting', 'joined', 'fetching']);
    // Committed positions stay within what kafkajs has read: kafkajs fetches
    // from a committed offset it has not passed yet, and past the log end it
    // resets the partition and commits the reset by itself.

    expect(await port.commit([{ topic, partition: 0, next: 1 }])).toEqual({ kind: 'applied' });
    // kafkajs stops its runner synchronously when a disconnect begins; a
    // commit made then resolves in kafkajs without a request being sent.
    const closing = port.disconnect();
    expect(await port.commit([{ topic, partition: 0, next: 2 }])).toMatchObject({
      kind: 'not-running',
    });
    await closing;
    expect(await fx.committed(groupId, topic)).toEqual(new Map([[0, 1]]));
  });
});
