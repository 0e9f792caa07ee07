import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { pulsar as pulsarService } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { pulsar } from '../../src/index.js';
import { produce } from '../support/ws-producer.js';
import { backlog, createTopic, newTopic, until } from '../ws/admin.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'twg-pulsar-topology-'));
  dirs.push(d);
  return d;
}

/** `count` messages into each partition's topic, each with a key and a property. */
async function fill(topic: string, partitions: number, count: number, from = 0): Promise<void> {
  const { wsUrl } = pulsarService();
  for (let p = 0; p < partitions; p++) {
    const messages = Array.from({ length: count }, (_, i) => ({
      payload: Buffer.from(JSON.stringify({ p, i: from + i })),
      key: `k${String(from + i)}`,
      properties: { n: String(from + i) },
    }));
    await produce(wsUrl, `${topic}-partition-${String(p)}`, messages, { batchingMaxMessages: 16 });
  }
}

const { wsUrl, adminUrl } = pulsarService();

describe('Pulsar -> raw segments, against the real broker', () => {
  it('a Shared subscription: every message lands in raw, and only then is acknowledged', async () => {
    const topic = newTopic('sub');
    await createTopic(topic, 3);
    const subscription = 'thalweg-test';
    const dir = await tempDir();
    const job = await openTopology({
      source: pulsar({
        wsUrl,
        adminUrl,
        cluster: 'pulsar-test',
        topics: [topic],
        subscription,
        type: 'Shared',
      }),
      raw: rawSegments({ dir: join(dir, 'raw') }),
      log: () => undefined,
    });
    const running = job.run();
    // The subscription exists once the sessions are open; fill it after.
    await until(async () => {
      try {
        await backlog(`${topic}-partition-0`, subscription);
        return true;
      } catch {
        return false;
      }
    }, 'the subscription');
    await fill(topic, 3, 100);
    await until(() => job.stats().raw.durableRecords >= 300, 'raw holding all 300');
    const stats = await job.stop();
    await running;
    expect(stats.raw.durableRecords).toBe(300);
    expect(stats.source.records).toBe(300);
    // Acknowledged after raw was durable: the backlog drains to zero.
    for (let p = 0; p < 3; p++) {
      const partition = `${topic}-partition-${String(p)}`;
      await until(async () => (await backlog(partition, subscription)) === 0, `${partition} acked`);
    }
  }, 90_000);

  it('readers: a second run resumes exactly after the stored cursor', async () => {
    const topic = newTopic('reader');
    await createTopic(topic, 2);
    await fill(topic, 2, 50);
    const dir = await tempDir();
    const open = () =>
      openTopology({
        source: pulsar({ wsUrl, adminUrl, cluster: 'pulsar-test', topics: [topic], reader: true }),
        raw: rawSegments({ dir: join(dir, 'raw') }),
        log: () => undefined,
      });

    const first = await open();
    const firstRun = first.run();
    await until(() => first.stats().raw.durableRecords >= 100, 'the first 100 in raw');
    expect((await first.stop()).source.records).toBe(100);
    await firstRun;

    await fill(topic, 2, 30, 50);
    const second = await open();
    const secondRun = second.run();
    await until(() => second.stats().raw.durableRecords >= 60, 'the next 60 in raw');
    const stats = await second.stop();
    await secondRun;
    // Exactly the new ones: nothing before the cursor is read again.
    expect(stats.source.records).toBe(60);
  }, 90_000);
});
