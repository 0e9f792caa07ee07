import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Changes, uniqueName, waitFor } from '@thalweg/test-services';
import type { AssignmentEvent } from '@thalweg/connector-core';
import {
  type CommitOffset,
  type CommitOutcome,
  type ConsumerFactory,
  type KafkaGroupSource,
} from '../src/index.js';
import { CLIENTS } from './clients.js';
import { BatchCollector, groupSource, KafkaFixture, text } from './helpers.js';

const fx = new KafkaFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const COMMIT_DELAY_MS = 250;

interface Sent {
  readonly member: string;
  readonly offsets: readonly CommitOffset[];
  /** What the member's assignment listener had been told when the commit left. */
  readonly owned: ReadonlySet<number>;
}

/**
 * A group member driven like the pipeline drives a source: it reads batches
 * and commits each batch's end as soon as it has it. Its assignment, as the
 * listener hears it, is tracked; every commit request that actually leaves
 * for the broker is recorded through the client seam with that assignment.
 */
class Member {
  readonly owned = new Set<number>();
  readonly events: AssignmentEvent[] = [];
  /** The join each event belongs to. */
  readonly joinOf: number[] = [];
  readonly values = new Set<string>();
  /** Highest offset end consumed per partition. */
  readonly consumedEnd = new Map<number, number>();
  readonly outcomes: CommitOutcome[] = [];
  readonly source: KafkaGroupSource;
  private readonly controller = new AbortController();
  private readonly loop: Promise<void>;
  /** Delayed commits, each settling once its outcome is recorded. */
  private readonly commits: Promise<void>[] = [];

  constructor(
    readonly name: string,
    topic: string,
    groupId: string,
    sent: Sent[],
    client: ConsumerFactory,
    private readonly changes: Changes,
  ) {
    const recording: ConsumerFactory = (settings, events) => {
      const port = client(settings, events);
      return {
        ...port,
        commit: (offsets) => {
          sent.push({ member: name, offsets, owned: new Set(this.owned) });
          return port.commit(offsets);
        },
      };
    };
    this.source = groupSource(topic, groupId, { clientId: name, kafka: recording });
    this.source.onAssignment((event) => {
      this.events.push(event);
      this.joinOf.push(this.source.stats().joins);
      for (const p of event.partitions) {
        if (event.kind === 'assigned') this.owned.add(p.partition);
        else this.owned.delete(p.partition);
      }
      if (event.kind === 'revoked') {
        // A durable write that ends after its partition moved: its commit
        // comes late, and must be dropped, never sent.
        for (const p of event.partitions) {
          const end = this.consumedEnd.get(p.partition);
          if (end !== undefined) this.commitLater(topic, p.partition, end, 0);
        }
      }
      changes.poke();
    });
    this.loop = this.run(topic);
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
    await this.source.close();
  }

  private commitLater(topic: string, partition: number, next: number, delayMs: number): void {
    this.commits.push(
      sleep(delayMs).then(async () => {
        this.outcomes.push(await this.source.tryCommit({ topic, partition }, next));
        this.changes.poke();
      }),
    );
  }

  private async run(topic: string): Promise<void> {
    for await (const batch of this.source.batches(this.controller.signal)) {
      const p = batch.span.partition;
      for (const r of batch.records) this.values.add(text(r.value));
      this.consumedEnd.set(p, Math.max(this.consumedEnd.get(p) ?? 0, batch.span.end));
      this.changes.poke();
      // The position is committed a little later, as after a durable write:
      // by then the partition may have moved to another member.
      this.commitLater(topic, p, batch.span.end, COMMIT_DELAY_MS);
    }
    await Promise.all(this.commits);
  }
}

describe.each(CLIENTS)('KafkaGroupSource rebalancing over $name', ({ factory }) => {
  it('three members joining while records are produced commit only what they own and lose nothing', async () => {
    const partitions = 6;
    const topic = await fx.topic(partitions);
    const groupId = uniqueName('twg-rebalance');
    const sent: Sent[] = [];
    let produced = 0;
    const run = { producing: true };
    const producer = (async () => {
      while (run.producing) {
        await fx.sendNumbered(topic, partitions, produced, 12);
        produced += 12;
        await sleep(40);
      }
    })();

    // Each member joins once the group has settled on the members before it,
    // while records keep coming: the member before it then loses partitions
    // with delayed commits for them still to come. Waiting on the assignments
    // (not on a clock) keeps the joins apart however slowly the group settles.
    const changes = new Changes();
    const JOIN_MS = 25_000;
    const members: Member[] = [];
    const settled = (): boolean => {
      const owned = members.map((m) => [...m.owned]);
      const all = owned.flat().sort((x, y) => x - y);
      return (
        owned.every((o) => o.length > 0) &&
        all.length === partitions &&
        all.every((p, i) => p === i)
      );
    };
    const ownership = (): string =>
      `the group to split ${String(partitions)} partitions among ${String(members.length)} members (` +
      members.map((m) => `${m.name}: [${[...m.owned].join(',')}]`).join('; ') +
      ')';
    for (const name of ['member-a', 'member-b', 'member-c']) {
      const member = new Member(name, topic, groupId, sent, factory, changes);
      members.push(member);
      await changes.until(settled, ownership, JOIN_MS);
      // It has read every partition it owns, so the next join takes some
      // from it with reads whose commits are still to come.
      await changes.until(
        () => [...member.owned].every((p) => member.consumedEnd.has(p)),
        () => `${name} to read from each partition it owns ([${[...member.owned].join(',')}])`,
        JOIN_MS,
      );
    }
    run.producing = false;
    await producer;
    const [a, b, c] = members as [Member, Member, Member];

    const expected = Array.from({ length: produced }, (_, i) => `v${i}`);
    const missing = () => {
      const union = new Set(members.flatMap((m) => [...m.values]));
      return expected.filter((v) => !union.has(v));
    };
    await changes.until(
      () => missing().length === 0,
      () => `every produced record to reach a member (${String(missing().length)} missing)`,
      15_000,
    );
    // Nothing lost: every produced record reached some member (duplicates allowed).
    expect(missing()).toEqual([]);

    // Every member saw at least one rebalance after its first assignment, and
    // the three final assignments partition the topic.
    expect(a.events.some((e) => e.kind === 'revoked')).toBe(true);
    const finalOwners = [...a.owned, ...b.owned, ...c.owned].sort((x, y) => x - y);
    expect(finalOwners).toEqual([0, 1, 2, 3, 4, 5]);
    for (const m of members) {
      // Within one join, revoked is always told before assigned.
      const order = m.events.map((e, i) => `${m.joinOf[i]}:${e.kind}`);
      for (let i = 1; i < order.length; i++) {
        const [join, kind] = (order[i] ?? '').split(':');
        expect(order[i - 1] === `${join}:assigned` && kind === 'revoked').toBe(false);
      }
    }

    // Stopping settles every delayed commit (a member stops its reads, then
    // waits for its commits, then leaves the group).
    await Promise.all(members.map((m) => m.stop()));

    // Every commit that left a member was for partitions it owned right then.
    expect(sent.length).toBeGreaterThan(0);
    for (const s of sent) {
      const foreign = s.offsets.filter((o) => !s.owned.has(o.partition)).map((o) => o.partition);
      expect({ member: s.member, foreign }).toEqual({ member: s.member, foreign: [] });
    }

    // No committed offset exceeds what the members that owned the partition consumed.
    const committed = await fx.committed(groupId, topic);
    for (let p = 0; p < partitions; p++) {
      const owners = members.filter((m) =>
        sent.some((s) => s.member === m.name && s.offsets.some((o) => o.partition === p)),
      );
      const consumed = Math.max(0, ...owners.map((m) => m.consumedEnd.get(p) ?? 0));
      expect(committed.get(p)).toBeLessThanOrEqual(consumed);
      expect(committed.get(p)).toBeGreaterThan(0);
    }
    // The delayed commits of partitions that moved were dropped (and counted), not sent:
    // member A lost partitions at each join, with commits for them still to come.
    expect(a.source.stats().droppedCommits['not-owned']).toBeGreaterThan(0);
    const outcomes = members.flatMap((m) => m.outcomes);
    expect(outcomes.filter((o) => o.kind === 'committed').length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.kind === 'dropped').length).toBe(
      members.reduce(
        (n, m) => n + Object.values(m.source.stats().droppedCommits).reduce((x, y) => x + y, 0),
        0,
      ),
    );
  }, 120_000);

  it('purges queued batches of revoked partitions, yields none after revoked, and drops a late commit', async () => {
    const topic = await fx.topic(3);
    const groupId = uniqueName('twg-revoke');
    // Many small record batches, so a fetch of maxBytesPerPartition 64 returns one each.
    for (let i = 0; i < 20; i++) await fx.sendNumbered(topic, 3, i * 3, 3);

    const a = groupSource(topic, groupId, {
      maxBytesPerPartition: 64,
      clientId: 'member-a',
      kafka: factory,
    });
    const heard: { event: AssignmentEvent; yielded: number; purged: number }[] = [];
    a.onAssignment((event) => {
      const stats = a.stats();
      heard.push({ event, yielded: stats.batches, purged: stats.purgedBatches });
    });
    const ca = new BatchCollector(a);
    await ca.until((c) => c.batches.length >= 1);
    // The reader is not pulling: batches pile up in the queue.
    await waitFor(
      () => a.stats().queuedBatches >= 20,
      () => `20 batches queued in member A (${String(a.stats().queuedBatches)})`,
    );
    const captured = ca.batches[0];
    expect(captured).toBeDefined();

    const b = groupSource(topic, groupId, {
      maxBytesPerPartition: 64,
      clientId: 'member-b',
      kafka: factory,
    });
    const cb = new BatchCollector(b);
    await cb.until((c) => c.batches.length >= 1);
    await waitFor(
      () => heard.some((h) => h.event.kind === 'revoked'),
      'member A to hear a revocation',
    );
    const revoke = heard.find((h) => h.event.kind === 'revoked');
    expect(revoke).toBeDefined();
    const revoked = new Set(revoke?.event.partitions.map((p) => p.partition));
    // The purge happened before the listener heard of the revocation.
    expect(revoke?.purged).toBeGreaterThan(0);

    // A late commit for a revoked partition is not sent.
    const lost = [...revoked][0] ?? -1;
    const before = await fx.committed(groupId, topic);
    expect(await a.tryCommit({ topic, partition: lost }, 5)).toMatchObject({
      kind: 'dropped',
      reason: 'not-owned',
    });
    expect(await fx.committed(groupId, topic)).toEqual(before);

    // After the revocation, A yields nothing of the revoked partitions.
    await ca.until((c) => c.batches.length >= (revoke?.yielded ?? 0) + 5);
    const after = ca.batches.slice(revoke?.yielded ?? 0);
    expect(after.filter((x) => revoked.has(x.span.partition))).toEqual([]);
    expect(a.stats().droppedCommits['not-owned']).toBe(1);

    await Promise.all([a.close(), b.close()]);
  });
});
