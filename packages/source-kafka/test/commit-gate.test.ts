import type { SourcePartition } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { CommitGate, type DroppedCommit } from '../src/commit-gate.js';
import type { CommitOffset, CommitResult } from '../src/consumer-port.js';
import { deferred, tick } from './fake-consumer.js';

// The gate alone: the test is the broker (each request's answer) and the
// group (joins), and reads every request the gate sent.

const P = (partition: number) => ({ topic: 't', partition });

function setup(readEnd: (p: SourcePartition) => number | undefined = () => undefined) {
  const requests: CommitOffset[][] = [];
  const answers: ReturnType<typeof deferred<CommitResult>>[] = [];
  const dropped: DroppedCommit[] = [];
  const logs: string[] = [];
  const gate = new CommitGate(
    (offsets) => {
      requests.push([...offsets]);
      const answer = deferred<CommitResult>();
      answers.push(answer);
      return answer.promise;
    },
    readEnd,
    (d) => dropped.push(d),
    (line) => logs.push(line),
  );
  const live = (assignment: readonly SourcePartition[]) => {
    gate.joinStarting();
    gate.joined(assignment);
    gate.fetching();
  };
  return { gate, requests, answers, dropped, logs, live };
}

const applied: CommitResult = { kind: 'applied' };

describe('CommitGate', { timeout: 2000 }, () => {
  it('sends one request at a time, coalescing what waits to the highest offset per partition', async () => {
    const s = setup();
    s.live([P(0), P(1)]);
    const a = s.gate.commit(P(0), 10);
    const b = s.gate.commit(P(0), 20);
    const c = s.gate.commit(P(1), 5);
    const d = s.gate.commit(P(0), 30);
    expect(s.requests).toEqual([[{ topic: 't', partition: 0, next: 10 }]]);
    s.answers[0]?.resolve(applied);
    expect(await a).toEqual({ kind: 'committed' });
    await tick();
    expect(s.requests[1]).toEqual([
      { topic: 't', partition: 0, next: 30 },
      { topic: 't', partition: 1, next: 5 },
    ]);
    s.answers[1]?.resolve(applied);
    expect(await Promise.all([b, c, d])).toEqual([
      { kind: 'committed' },
      { kind: 'committed' },
      { kind: 'committed' },
    ]);
    expect(s.gate.stats()).toMatchObject({ commits: 3, commitRequests: 2, pendingCommits: 0 });
  });

  it('never moves a committed offset back: a lower one is dropped as behind', async () => {
    const s = setup();
    s.live([P(0)]);
    const first = s.gate.commit(P(0), 50);
    s.answers[0]?.resolve(applied);
    await first;
    expect(await s.gate.commit(P(0), 40)).toMatchObject({ kind: 'dropped', reason: 'behind' });
    expect(await s.gate.commit(P(0), 50)).toEqual({ kind: 'committed' });
    expect(s.requests).toHaveLength(1);
    expect(s.dropped.map((d) => [d.next, d.reason])).toEqual([[40, 'behind']]);
  });

  it('holds commits during a rejoin and checks them against the new assignment', async () => {
    const s = setup();
    s.live([P(0), P(1)]);
    s.gate.joinStarting();
    const kept = s.gate.commit(P(0), 7);
    const lost = s.gate.commit(P(1), 9);
    s.gate.joined([P(0)]);
    // Joined, but the fetch loop has not run: kafkajs would drop a commit silently.
    expect(s.requests).toEqual([]);
    s.gate.fetching();
    expect(await lost).toMatchObject({ kind: 'dropped', reason: 'not-owned' });
    expect(s.requests).toEqual([[{ topic: 't', partition: 0, next: 7 }]]);
    s.answers[0]?.resolve(applied);
    expect(await kept).toEqual({ kind: 'committed' });
  });

  it('forgets the floor of a partition that left: committed again after it comes back lower', async () => {
    const s = setup();
    s.live([P(0)]);
    const high = s.gate.commit(P(0), 100);
    s.answers[0]?.resolve(applied);
    await high;
    s.live([]);
    s.live([P(0)]);
    const low = s.gate.commit(P(0), 60);
    await tick();
    expect(s.requests[1]).toEqual([{ topic: 't', partition: 0, next: 60 }]);
    s.answers[1]?.resolve(applied);
    expect(await low).toEqual({ kind: 'committed' });
  });

  it("passes the broker's refusal on as a drop, never as a failure to retry", async () => {
    const s = setup();
    s.live([P(0)]);
    const c = s.gate.commit(P(0), 3);
    s.answers[0]?.resolve({ kind: 'ownership-changed', detail: 'REBALANCE_IN_PROGRESS' });
    expect(await c).toEqual({
      kind: 'dropped',
      reason: 'ownership-changed',
      detail: 'REBALANCE_IN_PROGRESS',
    });
    expect(s.gate.stats().droppedCommits['ownership-changed']).toBe(1);
  });

  it('a failed request rejects its waiters with TWG_KAFKA_COMMIT_FAILED', async () => {
    const s = setup();
    s.live([P(0)]);
    const c = s.gate.commit(P(0), 3);
    const failed = expect(c).rejects.toThrow(/TWG_KAFKA_COMMIT_FAILED.*t\/0@3.*socket closed/);
    s.answers[0]?.reject(new Error('socket closed'));
    await failed;
  });

  it('refuses a position beyond what was yielded (lead is loss)', async () => {
    const s = setup(() => 10);
    s.live([P(0)]);
    await expect(s.gate.commit(P(0), 11)).rejects.toThrow(/TWG_KAFKA_COMMIT_AHEAD/);
    expect(s.requests).toEqual([]);
  });

  it('end() drops every waiting commit and every later one; a throwing hook is only logged', async () => {
    const s = setup();
    s.gate.joinStarting();
    const waiting = s.gate.commit(P(0), 1);
    s.gate.end('closed', 'source closed');
    expect(await waiting).toMatchObject({ kind: 'dropped', reason: 'closed' });
    const after = s.gate.commit(P(0), 2);
    expect(await after).toMatchObject({ kind: 'dropped', reason: 'closed' });
    const thrower = new CommitGate(
      () => Promise.resolve(applied),
      () => undefined,
      () => {
        throw new Error('hook broke');
      },
      (line) => s.logs.push(line),
    );
    thrower.end('not-running', 'crashed');
    expect(await thrower.commit(P(0), 1)).toMatchObject({ kind: 'dropped' });
    expect(s.logs.some((l) => l.includes('hook broke'))).toBe(true);
  });
});
