import { pulsar } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { webSocketPort } from '../../src/index.js';
import { createTopic, newTopic } from './admin.js';

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
