import { pulsar } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import type { PulsarMessage } from '../../src/index.js';
import { decodeMessageId, webSocketPort } from '../../src/index.js';
import { numbered, produce } from '../support/ws-producer.js';
import { createTopic, newTopic, until } from './admin.js';

const place = (id: string): string => {
  const { ledgerId, entryId, batchIndex } = decodeMessageId(id);
  return `${String(ledgerId)}:${String(entryId)}:${String(batchIndex)}`;
};

const port = webSocketPort({ wsUrl: pulsar().wsUrl, adminUrl: pulsar().adminUrl });
afterAll(() => port.close());

describe('webSocketPort.partitions (Pulsar)', () => {
  it('counts the partitions of a partitioned topic, and 0 for a plain one', async () => {
    const partitioned = newTopic('twg-ws-parts');
    const plain = newTopic('twg-ws-plain');
    await createTopic(partitioned, 3);
    await createTopic(plain);
    expect(await port.partitions(partitioned)).toBe(3);
    expect(await port.partitions(plain)).toBe(0);
    expect(await port.partitions(`${partitioned}-partition-2`)).toBe(0);
  });

  it('serves one consumer and one reader per partition, each with the messages of its partition', async () => {
    const topic = newTopic('twg-ws-per-part');
    await createTopic(topic, 3);
    const byPartition: string[][] = [];
    for (const n of [0, 1, 2]) {
      const name = `${topic}-partition-${String(n)}`;
      byPartition.push(await produce(pulsar().wsUrl, name, numbered(`p${String(n)}`, 4)));
    }
    for (const [n, expected] of byPartition.entries()) {
      const partition = `${topic}-partition-${String(n)}`;
      const consumed: PulsarMessage[] = [];
      const session = await port.subscribe(
        {
          topic: partition,
          subscription: 'twg',
          type: 'Failover',
          initialPosition: 'Earliest',
          receiverQueueSize: 1000,
        },
        { message: (m) => consumed.push(m), closed: () => undefined },
      );
      session.permit(100);
      await until(() => consumed.length === expected.length, `partition ${String(n)}`);
      await session.close();
      // A producer on `-partition-N` gets ids without the partition; the consumer's carry it.
      expect(consumed.map((m) => place(m.messageId))).toEqual(expected.map(place));
      expect(consumed.map((m) => decodeMessageId(m.messageId).partition)).toEqual([n, n, n, n]);

      const first = consumed[0]?.messageId ?? '';
      const read: PulsarMessage[] = [];
      const reader = await port.read(
        { topic: partition, start: { kind: 'after', messageId: first }, receiverQueueSize: 100 },
        { message: (m) => read.push(m), closed: () => undefined },
      );
      await until(
        () => read.length === expected.length - 1,
        `the reader of partition ${String(n)}`,
      );
      await reader.close();
      expect(read.map((m) => m.messageId)).toEqual(consumed.slice(1).map((m) => m.messageId));
    }
  });

  it('refuses a topic that does not exist, naming it', async () => {
    const missing = newTopic('twg-ws-missing');
    await expect(port.partitions(missing)).rejects.toMatchObject({
      code: 'TWG_PULSAR_TOPIC_UNKNOWN',
      errorClass: 'fatal-config',
      message: expect.stringContaining(missing) as string,
    });
  });

  it.each([
    'orders',
    'public/default/orders',
    'non-persistent://public/default/o',
    'persistent://public/o',
  ])('refuses the name %s, which is not a full persistent topic name', async (name) => {
    await expect(port.partitions(name)).rejects.toMatchObject({
      code: 'TWG_PULSAR_TOPIC_INVALID',
      message: expect.stringContaining(JSON.stringify(name)) as string,
    });
  });

  it('names the admin URL when nothing listens there', async () => {
    const nowhere = webSocketPort({ wsUrl: 'ws://127.0.0.1:1', adminUrl: 'http://127.0.0.1:1' });
    await expect(nowhere.partitions('persistent://public/default/t')).rejects.toMatchObject({
      code: 'TWG_PULSAR_BROKER_UNREACHABLE',
      errorClass: 'transient',
      message: expect.stringContaining(
        'http://127.0.0.1:1/admin/v2/persistent/public/default/t/partitions',
      ) as string,
    });
    await expect(
      nowhere.read(
        {
          topic: 'persistent://public/default/t',
          start: { kind: 'earliest' },
          receiverQueueSize: 1,
        },
        { message: () => undefined, closed: () => undefined },
      ),
    ).rejects.toMatchObject({
      code: 'TWG_PULSAR_BROKER_UNREACHABLE',
      message: expect.stringContaining(
        'ws://127.0.0.1:1/ws/v2/reader/persistent/public/default/t',
      ) as string,
    });
  });
});
