import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { pulsar as pulsarService } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { pulsar } from '../../src/index.js';
import { produce } from '../support/ws-producer.js';
import { backlog, createTopic, growTopic, newTopic, until } from '../ws/admin.js';

// A partitioned topic grows while a pipeline reads it (the admin API adds
// a partition): the source lists partitions every POLL_MS and reads the new
// one, a subscription from its subscription, a reader from its stored cursor.

const POLL_MS = 200;
const { wsUrl, adminUrl } = pulsarService();
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function rawDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'twg-pulsar-grow-'));
  dirs.push(d);
  return join(d, 'raw');
}

async function fill(partitionTopic: string, count: number, from = 0): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => ({
    payload: Buffer.from(JSON.stringify({ i: from + i })),
  }));
  await produce(wsUrl, partitionTopic, messages, { batchingMaxMessages: 8 });
}

describe('a partition added while a pipeline reads the topic, against the real broker', () => {
  it('a Shared subscription reads it and acknowledges it once raw holds it', async () => {
    const topic = newTopic('grow-sub');
    await createTopic(topic, 2);
    const subscription = 'thalweg-grow';
    const job = await openTopology({
      source: pulsar({
        wsUrl,
        adminUrl,
        cluster: 'pulsar-test',
        topics: [topic],
        subscription,
        type: 'Shared',
        partitionPollMs: POLL_MS,
      }),
      raw: rawSegments({ dir: await rawDir() }),
      log: () => undefined,
    });
    const running = job.run();
    await until(async () => {
      try {
        await backlog(`${topic}-partition-1`, subscription);
        return true;
      } catch {
        return false;
      }
    }, 'the subscription on both partitions');
    await fill(`${topic}-partition-0`, 40);
    await fill(`${topic}-partition-1`, 40);
    await until(() => job.stats().raw.durableRecords >= 80, 'raw holding the first 80');

    await growTopic(topic, 3);
    await fill(`${topic}-partition-2`, 25);
    await until(() => job.stats().raw.durableRecords >= 105, 'raw holding the new partition too');
    const stats = await job.stop();
    await running;
    expect(stats.raw.durableRecords).toBe(105);
    const partition = `${topic}-partition-2`;
    await until(async () => (await backlog(partition, subscription)) === 0, `${partition} acked`);
  }, 90_000);

  it('readers read it, store its cursor, and a second run resumes there exactly', async () => {
    const topic = newTopic('grow-reader');
    await createTopic(topic, 1);
    await fill(`${topic}-partition-0`, 20);
    const dir = await rawDir();
    const open = () =>
      openTopology({
        source: pulsar({
          wsUrl,
          adminUrl,
          cluster: 'pulsar-test',
          topics: [topic],
          reader: true,
          partitionPollMs: POLL_MS,
        }),
        raw: rawSegments({ dir }),
        log: () => undefined,
      });

    const first = await open();
    const firstRun = first.run();
    await until(() => first.stats().raw.durableRecords >= 20, 'the first 20 in raw');
    await growTopic(topic, 2);
    await fill(`${topic}-partition-1`, 30);
    await until(() => first.stats().raw.durableRecords >= 50, 'the found partition in raw');
    expect((await first.stop()).source.records).toBe(50);
    await firstRun;

    await fill(`${topic}-partition-1`, 10, 30);
    const second = await open();
    const secondRun = second.run();
    await until(() => second.stats().raw.durableRecords >= 10, 'the next 10 in raw');
    const stats = await second.stop();
    await secondRun;
    // Exactly the new ones: the found partition's cursor was stored like the others'.
    expect(stats.source.records).toBe(10);
  }, 90_000);
});
