import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sinkId } from '@thalweg/connector-core';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments, RawSegmentSink } from '@thalweg/sink-files';
import { fakeZerobus, fromJson, zerobus } from '@thalweg/sink-zerobus';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { pulsar as pulsarService } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { pulsar } from '../../src/index.js';
import { produce } from '../support/ws-producer.js';
import { backlog, createTopic, newTopic, until } from '../ws/admin.js';

const CLUSTER = 'pulsar-test';
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'twg-pulsar-shared-'));
  dirs.push(d);
  return d;
}

const { wsUrl, adminUrl } = pulsarService();

async function subscribed(topic: string, partitions: number, subscription: string): Promise<void> {
  for (let p = 0; p < partitions; p++) {
    await until(
      async () => {
        try {
          await backlog(`${topic}-partition-${String(p)}`, subscription);
          return true;
        } catch {
          return false;
        }
      },
      `the subscription on partition ${String(p)}`,
    );
  }
}

/** Every payload raw in `dir` holds for `topic`, read back from its segments. */
async function rawPayloads(dir: string, topic: string, partitions: number): Promise<string[]> {
  const raw = await RawSegmentSink.open({
    id: sinkId('raw'),
    dir,
    cluster: CLUSTER,
    confirm: { apply: async () => undefined },
    log: () => undefined,
  });
  const out: string[] = [];
  try {
    for (let partition = 0; partition < partitions; partition++) {
      for (const span of raw.durableSpans({ topic, partition })) {
        for await (const batch of raw.read(span)) {
          for (const r of batch.records) out.push(Buffer.from(r.value).toString('utf8'));
        }
      }
    }
  } finally {
    await raw.close();
  }
  return out;
}

describe('Pulsar subscriptions against the real broker', () => {
  it('one Shared subscription read by two topologies: every message lands in a raw, none is left', async () => {
    const topic = newTopic('shared');
    await createTopic(topic, 2);
    const subscription = 'shared-by-two';
    const open = async () => {
      const dir = await tempDir();
      const job = await openTopology({
        source: pulsar({
          wsUrl,
          adminUrl,
          cluster: CLUSTER,
          topics: [topic],
          subscription,
          type: 'Shared',
        }),
        raw: rawSegments({ dir: join(dir, 'raw') }),
        log: () => undefined,
      });
      return { job, raw: join(dir, 'raw'), running: job.run() };
    };
    const a = await open();
    const b = await open();
    await subscribed(topic, 2, subscription);
    const sent: string[] = [];
    for (let p = 0; p < 2; p++) {
      const messages = Array.from({ length: 150 }, (_, i) => {
        const body = JSON.stringify({ p, i });
        sent.push(body);
        return { payload: Buffer.from(body) };
      });
      await produce(wsUrl, `${topic}-partition-${String(p)}`, messages);
    }
    const durable = () => a.job.stats().raw.durableRecords + b.job.stats().raw.durableRecords;
    await until(() => durable() >= 300, 'both raws holding all 300 between them');
    // None is left: the running topologies acknowledge all they made durable.
    // Asked while both still run, since a message the broker hands one of
    // them again after it stopped reading stays unacknowledged (at least
    // once: the next run reads it), and that race is not what this checks.
    for (let p = 0; p < 2; p++) {
      const partition = `${topic}-partition-${String(p)}`;
      await until(async () => (await backlog(partition, subscription)) === 0, `${partition} acked`);
    }
    await a.job.stop();
    await b.job.stop();
    await Promise.all([a.running, b.running]);
    const held = [...(await rawPayloads(a.raw, topic, 2)), ...(await rawPayloads(b.raw, topic, 2))];
    // At least once: each message in one raw or the other (a redelivery may put one in both).
    expect(new Set(held)).toEqual(new Set(sent));
  }, 90_000);

  it('a payload a secondary cannot decode is quarantined; raw keeps it, ingest goes on', async () => {
    const topic = newTopic('quarantine');
    await createTopic(topic, 1);
    const subscription = 'quarantine';
    const dir = await tempDir();
    const job = await openTopology({
      source: pulsar({
        wsUrl,
        adminUrl,
        cluster: CLUSTER,
        topics: [topic],
        subscription,
        type: 'Exclusive',
      }),
      raw: rawSegments({ dir: join(dir, 'raw') }),
      secondaries: {
        'zerobus-events': zerobus({
          table: 'main.pulsar.events',
          schema: BatchSchema.define({
            fields: [{ name: 'i', type: column.int64, nullable: false }],
            recordId: 'hex',
          }),
          transport: fakeZerobus(),
          row: fromJson((o: { i: number }) => ({ i: BigInt(o.i) })),
        }),
      },
      log: () => undefined,
    });
    const running = job.run();
    await subscribed(topic, 1, subscription);
    const messages = Array.from({ length: 40 }, (_, i) => ({
      payload: Buffer.from(i % 10 === 3 ? `not json ${String(i)}` : JSON.stringify({ i })),
    }));
    await produce(wsUrl, `${topic}-partition-0`, messages);
    await until(() => job.stats().raw.durableRecords >= 40, 'raw holding all 40');
    await until(
      () => (job.stats().sinks['zerobus-events']?.deliveredRecords ?? 0) >= 36,
      'the secondary holding the 36 good ones',
    );
    const stats = await job.stop();
    await running;
    expect(stats.raw.durableRecords).toBe(40);
    expect(stats.quarantine.byReason).toEqual({ decode: 4 });
    expect(stats.sinks['zerobus-events']?.deliveredRecords).toBe(36);
  }, 90_000);
});
