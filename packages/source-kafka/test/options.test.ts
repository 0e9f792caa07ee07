import { describe, expect, it } from 'vitest';
import { ConfigError } from '@thalweg/connector-core';
import { kafkaSource, parseKafkaSourceOptions } from '../src/index.js';

const group = {
  mode: 'group',
  brokers: ['127.0.0.1:9092'],
  cluster: 'prod-eu',
  topics: ['orders'],
  groupId: 'ingest',
} as const;

function refusal(input: unknown): ConfigError {
  try {
    parseKafkaSourceOptions(input);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('kafkaSource options', () => {
  it('fills conservative defaults', () => {
    const s = parseKafkaSourceOptions(group);
    expect(s).toMatchObject({
      clientId: 'thalweg',
      fromBeginning: true,
      maxQueuedBatches: 256,
      maxQueuedBytes: 64 * 1024 * 1024,
      maxBytes: 10 * 1024 * 1024,
      maxBytesPerPartition: 1024 * 1024,
      minBytes: 1,
      maxWaitTimeInMs: 500,
      sessionTimeout: 30_000,
      rebalanceTimeout: 60_000,
      heartbeatInterval: 3000,
      logLevel: 'nothing',
      connectTimeoutMs: 10_000,
    });
  });

  it.each([
    [{ ...group, mode: 'manual' }, 'mode', /must be "group"/],
    [{ ...group, brokers: [] }, 'brokers', /non-empty array/],
    [{ ...group, brokers: ['kafka:9092', 'kafka'] }, 'brokers[1]', /"kafka" is not "host:port"/],
    [{ ...group, brokers: ['kafka:99999'] }, 'brokers[0]', /port in \[1, 65535\]/],
    [{ ...group, cluster: undefined }, 'cluster', /non-empty string/],
    [{ ...group, cluster: '  ' }, 'cluster', /non-empty string/],
    [{ ...group, topics: ['a', 'a b'] }, 'topics[1]', /not a Kafka topic name/],
    [{ ...group, topics: ['a', 'a'] }, 'topics[1]', /listed twice/],
    [{ ...group, groupId: '' }, 'groupId', /non-empty string/],
    [{ ...group, maxQueuedBatches: 0 }, 'maxQueuedBatches', /integer in \[1,/],
    [{ ...group, maxQueuedBytes: 1.5 }, 'maxQueuedBytes', /integer/],
    [{ ...group, maxWaitTimeInMs: -1 }, 'maxWaitTimeInMs', /integer in \[0,/],
    [
      { ...group, heartbeatInterval: 6000, sessionTimeout: 6000 },
      'heartbeatInterval',
      /lower than sessionTimeout/,
    ],
    [{ ...group, fromBeginning: 'yes' }, 'fromBeginning', /boolean/],
    [{ ...group, logLevel: 'loud' }, 'logLevel', /one of nothing, error/],
    [{ ...group, connectTimeoutMs: 0 }, 'connectTimeoutMs', /integer in \[1,/],
    [{ ...group, connectTimeoutMs: 2 ** 31 }, 'connectTimeoutMs', /integer in \[1,/],
    [{ ...group, log: 'console' }, 'log', /function/],
    [{ ...group, onDroppedCommit: 1 }, 'onDroppedCommit', /function/],
    [{ ...group, partitions: [] }, 'partitions', /not used in group mode/],
    [{ ...group, maxQueueBatches: 3 }, 'maxQueueBatches', /unknown key/],
    [{ ...group, sessionTimeoutMs: 3 }, 'sessionTimeoutMs', /unknown key/],
    [
      {
        ...group,
        mode: 'assigned',
        topics: undefined,
        groupId: undefined,
        partitions: [{ topic: 'a', partition: -1 }],
      },
      'partitions[0].partition',
      /non-negative integer/,
    ],
    [
      { ...group, mode: 'assigned', topics: undefined, partitions: [{ topic: 'a', partition: 0 }] },
      'groupId',
      /throwaway group/,
    ],
    [
      {
        ...group,
        mode: 'assigned',
        topics: undefined,
        groupId: undefined,
        partitions: [
          { topic: 'a', partition: 0 },
          { topic: 'a', partition: 0 },
        ],
      },
      'partitions[1]',
      /listed twice/,
    ],
    [
      { ...group, mode: 'assigned', topics: undefined, groupId: undefined },
      'partitions',
      /non-empty array/,
    ],
  ])('refuses %o naming %s', (input, path, reason) => {
    const error = refusal(input);
    expect(error.code).toBe('TWG_CONFIG_INVALID');
    expect(error.path).toBe(`kafkaSource.${path}`);
    expect(error.reason).toMatch(reason);
  });

  it('reports every problem at once', () => {
    const error = refusal({ ...group, cluster: '', brokers: ['x'], topics: [] });
    expect(error.path).toBe('kafkaSource.brokers[0]');
    expect(error.message).toMatch(
      /also: .*kafkaSource\.cluster: must be a non-empty string.*kafkaSource\.topics: must be a non-empty array/,
    );
  });

  it('kafkaSource refuses bad options before touching any client', () => {
    let built = 0;
    expect(() =>
      kafkaSource({
        ...group,
        cluster: '',
        kafka: () => {
          built += 1;
          throw new Error('unreachable');
        },
      }),
    ).toThrow(/TWG_CONFIG_INVALID: kafkaSource\.cluster: must be a non-empty string/);
    expect(built).toBe(0);
  });

  it('logs every knob at start to debug, and nothing to log', () => {
    const lines: string[] = [];
    const info: string[] = [];
    kafkaSource({
      ...group,
      log: (line) => info.push(line),
      debug: (line) => lines.push(line),
      kafka: () => ({
        connect: async () => undefined,
        subscribe: async () => undefined,
        run: async () => undefined,
        commit: async () => ({ kind: 'applied' }),
        seek: () => undefined,
        pause: () => undefined,
        resume: () => undefined,
        disconnect: async () => undefined,
      }),
    });
    expect(lines).toContain('thalweg source-kafka: cluster=prod-eu');
    expect(lines).toContain('thalweg source-kafka: maxQueuedBatches=256');
    expect(lines).toContain('thalweg source-kafka: groupId=ingest');
    expect(info).toEqual([]);
  });
});
