import { CoverageError } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { PositionCommitter } from '../src/position-committer.js';

describe('PositionCommitter', () => {
  it('never commits a partition revoked while the round committed another one', async () => {
    const p0 = { topic: 't', partition: 0 };
    const p1 = { topic: 't', partition: 1 };
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const committer = new PositionCommitter(
      async (p, next) => {
        calls.push(`${p.partition}@${next}`);
        // A commit that waits (a Kafka commit held during a rejoin).
        if (p.partition === 0) await gate;
      },
      5,
      () => undefined,
    );
    for (const p of [p0, p1]) {
      committer.boundary(p, 10);
      committer.durable(p, 10);
    }
    const round = committer.commitPending();
    // p1 is revoked while p0's commit is in flight, before the round reaches p1.
    committer.forget(p1);
    release();
    await round;
    expect(calls).toEqual(['0@10']);
    expect(committer.committed(p0)).toBe(10);
    expect(committer.hasPending()).toBe(false);
  });

  it('fails loud when one partition keeps failing while another commits', async () => {
    const p0 = { topic: 't', partition: 0 };
    const p1 = { topic: 't', partition: 1 };
    const committer = new PositionCommitter(
      async (p) => {
        if (p.partition === 0) throw new Error('refused for p0 (injected)');
      },
      4,
      () => undefined,
    );
    const rounds = async () => {
      for (let end = 10; end <= 100; end += 10) {
        for (const p of [p0, p1]) {
          committer.boundary(p, end);
          committer.durable(p, end);
        }
        await committer.commitPending();
      }
    };
    await expect(rounds()).rejects.toThrow(/TWG_PIPELINE_COMMIT_FAILED.*t\/0/);
    expect(committer.committed(p1)).toBeGreaterThan(0);
  });

  it('fails at once on a fatal-config refusal instead of retrying it to the limit', async () => {
    const p0 = { topic: 't', partition: 0 };
    let calls = 0;
    const committer = new PositionCommitter(
      async () => {
        calls += 1;
        throw new CoverageError('TWG_COVERAGE_RANGE_INVALID', 'cursor key topic: refused');
      },
      20,
      () => undefined,
    );
    committer.boundary(p0, 10);
    committer.durable(p0, 10);
    const error = await committer.commitPending().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'TWG_PIPELINE_COMMIT_FAILED' });
    expect((error as Error).cause).toBeInstanceOf(CoverageError);
    expect(calls).toBe(1);
  });
});
