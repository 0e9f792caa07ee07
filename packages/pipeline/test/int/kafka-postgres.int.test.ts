import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresUrl, uniqueName } from '@thalweg/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KafkaTopic,
  openMember,
  openPgCoverage,
  PG,
  prefix,
  rawHeld,
  waitFor,
  type Member,
  type MemberDirs,
} from './kafka-topology.js';

const dirs: string[] = [];
const pool = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
afterAll(async () => {
  await pool.end();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function memberDirs(): Promise<MemberDirs> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-pipeline-int-'));
  dirs.push(dir);
  return { raw: join(dir, 'raw'), coverage: join(dir, 'coverage') };
}

const sum = (offsets: number[]) => offsets.reduce((a, b) => a + Math.max(0, b), 0);

/** A seeded generator, so a failing run can be repeated. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('Kafka -> raw segments -> Postgres, against the real services', () => {
  const PARTITIONS = 3;
  const TOTAL = 20_000;
  let topic: KafkaTopic;

  beforeAll(async () => {
    topic = new KafkaTopic(uniqueName('pipeline'), PARTITIONS);
    await topic.create();
  });
  afterAll(async () => {
    await topic.close();
  });

  it('stopped at random points and restarted: raw holds all, commits never lead raw, Postgres holds each record once', async () => {
    const seed = Date.now() % 100_000;
    const rand = random(seed);
    const groupId = uniqueName('group');
    const table = uniqueName('events').replaceAll('-', '_');
    const member = await memberDirs();
    await topic.produce(TOTAL / 2);

    const stopsAt: number[] = [];
    const progress: number[] = [];
    for (let round = 0; ; round++) {
      const pgCoverage = await openPgCoverage();
      const pipeline: Member = await openMember({
        topic: topic.topic,
        groupId,
        dirs: member,
        table,
        pgCoverage,
        config: { maxBatchRecords: 50 + Math.floor(rand() * 400) },
      });
      const running = pipeline.run();
      // The second half is produced while round 1 runs.
      const producing = round === 1 ? topic.produce(TOTAL / 2) : Promise.resolve();
      const last = round >= 4;
      if (last) {
        await waitFor(async () => {
          return sum(await topic.committed(groupId)) === TOTAL;
        }, 'every record committed');
      } else {
        // Stop somewhere in this run: after a random number of records became durable.
        const left = Math.max(0, topic.produced - sum(await topic.committed(groupId)));
        const target = Math.min(left, Math.floor(rand() * 4000));
        await waitFor(() => pipeline.stats().raw.durableRecords >= target, `${target} durable`);
        stopsAt.push(target);
      }
      await producing;
      await pipeline.stop();
      await running;
      await pgCoverage.close();

      // After every stop: the committed group offset never exceeds what raw holds.
      const held = await rawHeld([member.raw], topic.topic, PARTITIONS);
      const committed = await topic.committed(groupId);
      progress.push(sum(committed));
      committed.forEach((c, p) => {
        expect(c, `seed ${seed}, round ${round}, partition ${p}`).toBeLessThanOrEqual(
          prefix(held[p] ?? new Set()),
        );
      });
      if (last) break;
    }

    const held = await rawHeld([member.raw], topic.topic, PARTITIONS);
    const ends = await topic.ends();
    expect(held.reduce((n, s) => n + s.size, 0)).toBe(TOTAL);
    ends.forEach((end, p) => {
      expect(prefix(held[p] ?? new Set())).toBe(end);
    });
    const { rows } = await pool.query<{ n: string; ids: string; keys: string }>(
      `SELECT count(*) AS n, count(DISTINCT _twg_record_id) AS ids,
              count(DISTINCT (src_partition, src_offset)) AS keys FROM "${table}"`,
    );
    expect(rows[0]).toEqual({ n: String(TOTAL), ids: String(TOTAL), keys: String(TOTAL) });
    // The sink's own transactional coverage claims exactly what is in the table.
    const pgCoverage = await openPgCoverage();
    for (let p = 0; p < PARTITIONS; p++) {
      const covered = await pgCoverage.covered({ sink: PG, topic: topic.topic, partition: p });
      expect(covered.ranges()).toEqual([{ start: 0, end: ends[p] }]);
    }
    await pgCoverage.close();
    expect(stopsAt).toHaveLength(4);
    // The stops landed part-way: some round ended with records left to read.
    expect(
      progress.slice(0, -1).some((n) => n > 0 && n < TOTAL),
      `progress ${progress.join(',')}`,
    ).toBe(true);
  }, 180_000);
});
