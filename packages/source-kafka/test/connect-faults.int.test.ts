import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import type { SourceBatch } from '@thalweg/connector-core';
import { kafkaSource, type KafkaSourceError } from '../src/index.js';
import { CLIENTS } from './clients.js';
import { FAST, KafkaFixture } from './helpers.js';

const fx = new KafkaFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

/** The first error `batches()` ends with; the source is closed either way. */
async function failure(source: {
  batches(signal: AbortSignal): AsyncIterable<SourceBatch>;
  close(): Promise<void>;
}): Promise<KafkaSourceError> {
  try {
    for await (const batch of source.batches(new AbortController().signal)) {
      expect(batch).toBeUndefined(); // a failing source yields nothing
    }
  } catch (error) {
    return error as KafkaSourceError;
  } finally {
    await source.close();
  }
  throw new Error('the source ended without an error');
}

async function listen(onSocket: (socket: Socket) => void): Promise<Server> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as { port: number }).port;
const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });

describe.each(CLIENTS)('connection faults name their cause over $name', ({ factory }) => {
  it('a topic that does not exist is named (group mode), and an existing one beside it is not', async () => {
    const missing = uniqueName('twg-missing');
    const present = await fx.topic(1);
    const error = await failure(
      kafkaSource({
        mode: 'group',
        brokers: kafkaBrokers(),
        cluster: 'test-cluster',
        topics: [present, missing],
        groupId: uniqueName('twg-group'),
        ...FAST,
        kafka: factory,
      }),
    );
    expect(error.code).toBe('TWG_KAFKA_TOPIC_UNKNOWN');
    expect(error.errorClass).toBe('fatal-config');
    expect(error.message).toContain(`no topic "${missing}" exists on ${kafkaBrokers().join(', ')}`);
    expect(error.message).not.toContain(present);
  }, 30_000);

  it('a topic that does not exist is named (assigned mode)', async () => {
    const missing = uniqueName('twg-missing');
    const error = await failure(
      kafkaSource({
        mode: 'assigned',
        brokers: kafkaBrokers(),
        cluster: 'test-cluster',
        partitions: [{ topic: missing, partition: 0 }],
        ...FAST,
        kafka: factory,
      }),
    );
    expect(error.code).toBe('TWG_KAFKA_TOPIC_UNKNOWN');
    expect(error.message).toContain(`"${missing}"`);
  }, 30_000);

  it('a closed port is named with its address within connectTimeoutMs', async () => {
    const server = await listen(() => undefined);
    const port = portOf(server);
    await closeServer(server);
    const error = await failure(
      kafkaSource({
        mode: 'group',
        brokers: [`127.0.0.1:${port}`],
        cluster: 'test-cluster',
        topics: ['any'],
        groupId: uniqueName('twg-group'),
        connectTimeoutMs: 1_500,
        ...FAST,
        kafka: factory,
      }),
    );
    expect(error.code).toBe('TWG_KAFKA_BROKER_UNREACHABLE');
    expect(error.message).toBe(
      `TWG_KAFKA_BROKER_UNREACHABLE: no broker of 127.0.0.1:${port} answered within 1500 ms (connectTimeoutMs)`,
    );
    // kafkajs alone retries for about ten seconds: the test's own timeout is the bound.
  }, 8_000);

  it('a listener that drops every connection ("Closed connection") is named within connectTimeoutMs', async () => {
    const sockets: Socket[] = [];
    const server = await listen((socket) => {
      sockets.push(socket);
      socket.destroy();
    });
    const port = portOf(server);
    try {
      const error = await failure(
        kafkaSource({
          mode: 'assigned',
          brokers: [`127.0.0.1:${port}`],
          cluster: 'test-cluster',
          partitions: [{ topic: 'any', partition: 0 }],
          connectTimeoutMs: 1_500,
          ...FAST,
          kafka: factory,
        }),
      );
      expect(error.code).toBe('TWG_KAFKA_BROKER_UNREACHABLE');
      expect(error.message).toContain(`127.0.0.1:${port}`);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      await closeServer(server);
    }
  }, 8_000);
});
