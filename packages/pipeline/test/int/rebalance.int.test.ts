import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueName } from '@thalweg/test-services';
import { afterAll, describe, expect, it } from 'vitest';
import type { PipelineStats } from '../../src/index.js';
import {
  KafkaTopic,
  openMember,
  openPgCoverage,
  prefix,
  rawHeld,
  waitFor,
  type Member,
  type MemberDirs,
} from './kafka-topology.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function memberDirs(): Promise<MemberDirs> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-pipeline-rebalance-'));
  dirs.push(dir);
  return { raw: join(dir, 'raw'), coverage: join(dir, 'coverage') };
}

describe('three pipelines in one consumer group, rebalancing while records are produced', () => {
  it('loses nothing, and no committed offset leads what the members’ raws hold', async () => {
    const PARTITIONS = 6;
    const TOTAL = 9000;
    const topic = new KafkaTopic(uniqueName('rebalance'), PARTITIONS);
    await topic.create();
    const groupId = uniqueName('group');
    const table = uniqueName('rebalance').replaceAll('-', '_');
    const pgCoverage = await openPgCoverage();
    const members: { pipeline: Member; running: Promise<PipelineStats>; dirs: MemberDirs }[] = [];
    const logs: string[][] = [];
    const join = async () => {
      const d = await memberDirs();
      const log: string[] = [];
      logs.push(log);
      const pipeline = await openMember({
        topic: topic.topic,
        groupId,
        dirs: d,
        table,
        pgCoverage,
        log,
      });
      members.push({ pipeline, running: pipeline.run(), dirs: d });
    };

    const producing = (async () => {
      for (let i = 0; i < 30; i++) {
        await topic.produce(TOTAL / 30);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await join();
    await waitFor(
      () => (members[0]?.pipeline.stats().raw.durableRecords ?? 0) > 0,
      'member A reading',
    );
    await join();
    await new Promise((r) => setTimeout(r, 500));
    await join();
    await producing;
    await waitFor(
      async () => {
        const c = await topic.committed(groupId);
        return c.reduce((a, b) => a + Math.max(0, b), 0) === TOTAL;
      },
      'every record committed',
      90_000,
    );
    const stats = await Promise.all(members.map(async (m) => m.pipeline.stop()));
    await Promise.all(members.map((m) => m.running));
    await pgCoverage.close();

    // Every member saw at least one assignment change (A was revoked partitions as B and C joined).
    expect(logs[0]?.some((l) => l.includes('revoked'))).toBe(true);
    const held = await rawHeld(
      members.map((m) => m.dirs.raw),
      topic.topic,
      PARTITIONS,
    );
    const committed = await topic.committed(groupId);
    const ends = await topic.ends();
    for (let p = 0; p < PARTITIONS; p++) {
      const union = held[p] ?? new Set<number>();
      expect(prefix(union), `partition ${p}`).toBe(ends[p]);
      expect(committed[p]).toBeLessThanOrEqual(prefix(union));
    }
    expect(held.reduce((n, s) => n + s.size, 0)).toBe(TOTAL);
    // No member failed a commit because of a partition it did not own.
    for (const s of stats) expect(s.positions.failures).toBe(0);
    await topic.close();
  });
});
