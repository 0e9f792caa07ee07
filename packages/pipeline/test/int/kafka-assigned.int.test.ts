import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { RawSegmentSink } from '@thalweg/sink-files';
import { kafkaSource } from '@thalweg/source-kafka';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/index.js';
import { CLUSTER, KafkaTopic, prefix, RAW, rawHeld, waitFor } from './kafka-topology.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const quiet = (): void => undefined;

describe('Kafka with manual assignment: the position lives in the offset store', () => {
  it('stores cursors only for what raw holds and resumes from them after a restart', async () => {
    const PARTITIONS = 2;
    const topic = new KafkaTopic(uniqueName('assigned'), PARTITIONS);
    await topic.create();
    await topic.produce(4000);
    const dir = await mkdtemp(join(tmpdir(), 'twg-assigned-'));
    dirs.push(dir);
    const partitions = [0, 1].map((partition) => ({ topic: topic.topic, partition }));
    const open = async () =>
      Pipeline.open({
        source: kafkaSource({
          mode: 'assigned',
          brokers: kafkaBrokers(),
          cluster: CLUSTER,
          partitions,
          maxWaitTimeInMs: 100,
          maxBytesPerPartition: 16 * 1024,
          log: quiet,
        }),
        sourceName: 'orders-kafka',
        coverage: await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [RAW] }),
        log: quiet,
        primaryRaw: (confirm) =>
          RawSegmentSink.open({
            id: RAW,
            dir: join(dir, 'raw'),
            cluster: CLUSTER,
            confirm,
            log: quiet,
          }),
      });
    const cursors = async () => {
      const store = await LevelDbCoverage.open({ location: join(dir, 'coverage'), sinks: [RAW] });
      const out = await Promise.all(
        partitions.map(
          async (p) => (await store.loadCursor({ source: 'orders-kafka', ...p }))?.nextOffset ?? 0,
        ),
      );
      await store.close();
      return out;
    };

    const first = await open();
    const running = first.run();
    await waitFor(() => first.stats().raw.durableRecords >= 500, '500 durable');
    await first.stop();
    await running;
    const afterFirst = await cursors();
    const held = await rawHeld([join(dir, 'raw')], topic.topic, PARTITIONS);
    afterFirst.forEach((c, p) => expect(c).toBeLessThanOrEqual(prefix(held[p] ?? new Set())));
    expect(afterFirst.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

    await topic.produce(2000);
    const second = await open();
    const again = second.run();
    await waitFor(async () => (await cursorsOf(second)) === 6000, 'all 6000 stored', 60_000);
    await second.stop();
    await again;
    expect(await cursors()).toEqual(await topic.ends());
    const all = await rawHeld([join(dir, 'raw')], topic.topic, PARTITIONS);
    expect(all.map((s) => s.size).reduce((a, b) => a + b, 0)).toBe(6000);
    // The restart read from the cursors: nothing before them was read again.
    expect(second.stats().source.records).toBe(6000 - afterFirst.reduce((a, b) => a + b, 0));
    await topic.close();

    async function cursorsOf(p: Pipeline): Promise<number> {
      return partitions.reduce((n, part) => n + (p.committed(part) ?? 0), 0);
    }
  }, 120_000);
});
