import { recordingPartContext } from '@thalweg/contracts';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  type BrokerManagedSource,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import { kafka, KafkaAssignedSource, KafkaGroupSource } from '../src/index.js';
import { FakeConsumer } from './fake-consumer.js';

const brokers = ['127.0.0.1:9092'];

describe('kafka(): the source part', () => {
  it('opens a group source of the cluster given, logging settings at debug and kafkajs at info', async () => {
    const { factory, consumer } = FakeConsumer.factory();
    const { context: ctx, info, debug } = recordingPartContext();
    const part = kafka({
      brokers,
      cluster: 'prod-eu',
      mode: 'group',
      topics: ['events'],
      groupId: 'ingest',
      kafka: factory,
    });
    expect(part.role).toBe('source');
    const source = await part.open(ctx);
    expect(source).toBeInstanceOf(KafkaGroupSource);
    expect(source.cluster).toBe('prod-eu');
    expect(source.groupId).toBe('ingest');
    expect(debug).toContain('thalweg source-kafka: cluster=prod-eu');
    expect(debug).toContain('thalweg source-kafka: groupId=ingest');
    expect(info).toEqual([]);
    // What kafkajs logs goes to the operator's log.
    consumer.settings?.log('kafkajs error [Consumer] Connection timeout');
    expect(info).toEqual(['kafkajs error [Consumer] Connection timeout']);
    await source.close();
  });

  it("queues at most a sixteenth of the topology's memory limit, at most 64 MiB, unless given a bound", async () => {
    const MiB = 1024 * 1024;
    const queued = async (memoryLimitBytes?: number, maxQueuedBytes?: number) => {
      const { factory } = FakeConsumer.factory();
      const { context, debug } = recordingPartContext(memoryLimitBytes);
      const source = await kafka({
        brokers,
        cluster: 'c',
        topics: ['t'],
        groupId: 'g',
        kafka: factory,
        ...(maxQueuedBytes === undefined ? {} : { maxQueuedBytes }),
      }).open(context);
      await source.close();
      return debug.find((l) => l.includes('maxQueuedBytes='));
    };
    expect(await queued()).toBe(`thalweg source-kafka: maxQueuedBytes=${64 * MiB}`);
    expect(await queued(512 * MiB)).toBe(`thalweg source-kafka: maxQueuedBytes=${32 * MiB}`);
    expect(await queued(512 * MiB, 5 * MiB)).toBe(
      `thalweg source-kafka: maxQueuedBytes=${5 * MiB}`,
    );
  });

  it('takes the mode from what is given when it is left out: a groupId is a group, partitions are assigned', async () => {
    const { factory } = FakeConsumer.factory();
    const group = await kafka({
      brokers,
      cluster: 'c',
      topics: ['t'],
      groupId: 'g',
      kafka: factory,
    }).open(recordingPartContext().context);
    expect(group).toBeInstanceOf(KafkaGroupSource);
    const assigned = await kafka({
      brokers,
      cluster: 'c',
      partitions: [{ topic: 't', partition: 0 }],
      kafka: factory,
    }).open(recordingPartContext().context);
    expect(assigned).toBeInstanceOf(KafkaAssignedSource);
    await group.close();
    await assigned.close();
    // Both at once is neither: refused as the options of one mode, naming the stray key.
    const both = { brokers, cluster: 'c', topics: ['t'], groupId: 'g', partitions: [] };
    expect(() => kafka(both as never)).toThrow(ConfigError);
  });

  it('reports an onDroppedCommit that threw through info', async () => {
    const { factory } = FakeConsumer.factory();
    const { context: ctx, info } = recordingPartContext();
    const source = await kafka({
      brokers,
      cluster: 'c',
      mode: 'group',
      topics: ['t'],
      groupId: 'g',
      kafka: factory,
      onDroppedCommit: () => {
        throw new Error('boom');
      },
    }).open(ctx);
    // Nothing is assigned yet: the commit is dropped, and the observer throws.
    expect((await source.tryCommit({ topic: 't', partition: 0 }, 1)).kind).toBe('dropped');
    expect(info).toEqual(['onDroppedCommit threw: boom']);
    await source.close();
  });

  it('opens an assigned source, its throwaway group logged at debug', async () => {
    const { factory, consumer } = FakeConsumer.factory();
    const { context: ctx, info, debug } = recordingPartContext();
    const source = await kafka({
      brokers,
      cluster: 'prod-us',
      mode: 'assigned',
      partitions: [{ topic: 'events', partition: 2 }],
      kafka: factory,
    }).open(ctx);
    expect(source).toBeInstanceOf(KafkaAssignedSource);
    expect(source.cluster).toBe('prod-us');
    expect(source.partitions()).toEqual([{ topic: 'events', partition: 2 }]);
    expect(debug).toContain(`thalweg source-kafka: throwaway groupId=${source.groupId}`);
    expect(consumer.settings?.groupId).toBe(source.groupId);
    expect(info).toEqual([]);
    await source.close();
  });

  it('validates at declaration, naming the field', () => {
    expect(() =>
      kafka({ brokers, cluster: 'c', mode: 'group', topics: ['bad topic'], groupId: 'g' }),
    ).toThrow(/kafkaSource\.topics\[0\]/);
  });

  it('refuses a log option from JavaScript rather than replacing it', () => {
    const options = {
      brokers,
      cluster: 'c',
      mode: 'group',
      topics: ['t'],
      groupId: 'g',
      log: () => undefined,
    };
    expect(() => kafka(options as unknown as Parameters<typeof kafka>[0])).toThrow(ConfigError);
    expect(() => kafka(options as unknown as Parameters<typeof kafka>[0])).toThrow(
      /kafkaSource\.log/,
    );
  });

  it('types the source by mode, and needs groupId in group mode (compile-time)', async () => {
    const { factory } = FakeConsumer.factory();
    const { context: ctx } = recordingPartContext();
    const group: BrokerManagedSource = await kafka({
      brokers,
      cluster: 'c',
      mode: 'group',
      topics: ['t'],
      groupId: 'g',
      kafka: factory,
    }).open(ctx);
    const assigned: StoreManagedSource = await kafka({
      brokers,
      cluster: 'c',
      mode: 'assigned',
      partitions: [{ topic: 't', partition: 0 }],
      kafka: FakeConsumer.factory().factory,
    }).open(ctx);
    // @ts-expect-error group mode needs a groupId
    const noGroup = () => kafka({ brokers, cluster: 'c', mode: 'group', topics: ['t'] });
    // @ts-expect-error the cluster is declared here, once, and is required
    const noCluster = () => kafka({ brokers, mode: 'group', topics: ['t'], groupId: 'g' });
    const withLog = () =>
      // @ts-expect-error the part logs through the topology's log
      kafka({ brokers, cluster: 'c', mode: 'assigned', partitions: [], log: () => undefined });
    expect(noGroup).toThrow(/kafkaSource\.groupId/);
    expect(noCluster).toThrow(/kafkaSource\.cluster/);
    expect(withLog).toThrow(/kafkaSource\.log/);
    expect([group.regime, assigned.regime]).toEqual(['broker-managed', 'store-managed']);
    await group.close();
    await assigned.close();
  });
});
