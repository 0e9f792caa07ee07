import { describe, expect, it } from 'vitest';
import type { ConfirmTarget } from '@thalweg/connector-core';
import { ConfirmLane, type Settled } from '../src/confirm-lane.js';
import type { PostgresSinkError } from '../src/errors.js';
import { SinkCounters } from '../src/sink-stats.js';
import { batchAt, cover, gate, ID, recordingTarget, settled, spanAt } from './helpers.js';

function committed(seq: number): Settled {
  return {
    queued: { seq, batch: batchAt(seq), span: spanAt(seq), confirm: cover(seq), submittedAt: 1 },
    committed: { bytes: 100, at: 2 },
  };
}

function lane<T extends ConfirmTarget<'secondary'>>(target: T) {
  const reported: PostgresSinkError[] = [];
  const counters = new SinkCounters();
  const l = new ConfirmLane({
    sink: ID,
    table: '"public"."t"',
    target,
    counters,
    report: (e) => reported.push(e),
  });
  return { lane: l, target, reported, counters };
}

describe('ConfirmLane', () => {
  it('applies in order, skips poison without confirming it, and releases waits as it goes', async () => {
    const { lane: l, target } = lane(recordingTarget());
    const upToTwo = l.settled(2);
    const all = l.settled(4);
    await l.handOver([committed(0), committed(1)]);
    await l.handOver([{ ...committed(2), committed: null }, committed(3)]);
    await upToTwo;
    await all;
    expect(target.applied.map((a) => a.receipt.span.start)).toEqual([0, 10, 30]);
    expect(target.applied[0]!.receipt).toMatchObject({
      durability: 'transaction-commit',
      bytes: 100,
      submittedAt: 1,
      confirmedAt: 2,
      records: 10,
    });
  });

  it('holds the writer while a group before the previous one is still confirming', async () => {
    const held = gate();
    const { lane: l } = lane({ apply: () => held.opened });
    await l.handOver([committed(0)]); // starts applying, does not wait for it
    const second = l.handOver([committed(1)]);
    expect(await settled(second)).toBe(false);
    held.open();
    await second;
    await l.drained();
  });

  it('carries on past a target that throws, reporting and counting it', async () => {
    const {
      lane: l,
      reported,
      counters,
    } = lane({
      apply: async (_c, r) => {
        if (r.span.start === 0) throw new Error('store down');
      },
    });
    await l.handOver([committed(0), committed(1)]);
    await l.settled(2);
    expect(reported.map((e) => e.code)).toEqual(['TWG_PG_SINK_CONFIRM_FAILED']);
    expect(reported[0]!.span).toEqual(spanAt(0));
    expect(counters.confirmFailures.value).toBe(1);
  });

  it('after fail, resolves the waits it covered and rejects the rest', async () => {
    const { lane: l } = lane(recordingTarget());
    const covered = l.settled(1);
    const beyond = l.settled(3);
    await l.handOver([committed(0)]);
    const reason = new Error('sink failed');
    await l.fail(reason);
    await covered;
    await expect(beyond).rejects.toBe(reason);
    await expect(l.settled(2)).rejects.toBe(reason);
    await l.settled(1);
  });
});
