import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresSink } from '../src/index.js';
import {
  batchAt,
  cover,
  gate,
  ID,
  ordersSpec,
  quiet,
  recordingTarget,
  settled,
  spanAt,
} from './helpers.js';

/**
 * A pool whose one client answers every statement at once, except COMMIT,
 * which waits for `commit.open()`: the sink's lane is seen between accepting
 * its batches and their transaction becoming durable, with no server.
 */
function heldCommitPool() {
  const commit = gate();
  const statements: string[] = [];
  const client = {
    query: async (q: string | { text: string }) => {
      const text = typeof q === 'string' ? q : q.text;
      statements.push(text.split(' ')[0] ?? '');
      if (text === 'commit') await commit.opened;
      return { rowCount: 10, rows: [] };
    },
    release: () => undefined,
    on: () => client,
  };
  const pool = { connect: async () => client } as unknown as pg.Pool;
  return { pool, commit, statements };
}

describe('PostgresSink lanes', () => {
  it('reports its one lane, stream 0, whose counters move as batches are submitted and committed', async () => {
    const { pool, commit, statements } = heldCommitPool();
    const target = recordingTarget();
    const sink = new PostgresSink({
      id: ID,
      pool,
      table: ordersSpec('t'),
      confirm: target,
      log: quiet,
    });
    const lanes = sink.lanes();
    expect(lanes.map((l) => l.stream)).toEqual(['0']);
    const metrics = lanes[0]!.metrics;
    for (const i of [0, 1]) await sink.submit(batchAt(i), spanAt(i), cover(i));
    expect(metrics.submitted.value).toBe(2);
    const flushed = sink.flush();
    // Accepted, not committed: nothing delivered yet.
    expect(await settled(flushed)).toBe(false);
    expect(statements).toContain('commit');
    expect(metrics.delivered.value).toBe(0);
    expect(metrics.pending.value).toBe(2);
    commit.open();
    await flushed;
    expect(target.applied).toHaveLength(2);
    expect(sink.lanes()[0]!.metrics).toBe(metrics);
    expect(metrics.delivered.value).toBe(2);
    expect(metrics.pending.value).toBe(0);
    expect(metrics.deliveryLatencyMs.count).toBe(2);
    await sink.close();
  });
});
