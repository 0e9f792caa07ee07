import { partitionKey, type SourcePartition, type SourceRecord } from '@thalweg/connector-core';
import { coordination, type Coordination } from '@thalweg/coordination';
import { etcd, privateEtcd, uniqueName, waitFor, type PrivateEtcd } from '@thalweg/test-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DedupConfigInput } from '../../src/index.js';
import { build } from '../doubles/harness.js';
import type { MemoryRow } from '../doubles/memory-sinks.js';
import { MemoryStoreSource } from '../doubles/memory-sources.js';

// Content dedup against etcd mode 3 (ADR 0036). The fault test kills real
// members of a cluster of this file's own (port base 28479), never the
// shared one other files use meanwhile.
let cluster: PrivateEtcd;
beforeAll(async () => {
  cluster = await privateEtcd(28479);
}, 60_000);
afterAll(async () => {
  await cluster.down();
});
const member = (verb: 'kill-member' | 'start-member', n: 1 | 2 | 3) =>
  verb === 'kill-member' ? cluster.kill(n) : cluster.start(n);

const ORDERS: DedupConfigInput = {
  key: { fields: ['orderId', 'eventTime'] },
  windowMs: 120_000,
  maxEntries: 100_000,
  declared: { naturalKey: ['orderId'] },
  timeoutMs: 1500,
};

const onEtcd = (namespace: string): Promise<Coordination> =>
  coordination({ mode: 3, endpoints: etcd().endpoints, namespace, callTimeoutMs: 1000 });

/** Orders `from..to-1` as attempt `attempt` wrote them, appended to `records` at its next offsets. */
function append(records: SourceRecord[], from: number, to: number, attempt: number): void {
  for (let n = from; n < to; n++) {
    records.push({
      offset: records.length,
      key: null,
      value: Buffer.from(JSON.stringify({ orderId: `o${n}`, eventTime: 1000 + n, attempt })),
      timestamp: 1_700_000_000_000 + n,
      headers: [],
    });
  }
}

function ordersSource(parts: readonly SourceRecord[][]): MemoryStoreSource {
  return new MemoryStoreSource(
    new Map(
      parts.map((records, partition) => {
        const p: SourcePartition = { topic: 'orders', partition };
        return [partitionKey(p), { partition: p, records }];
      }),
    ),
    5,
  );
}

const ids = (rows: Iterable<MemoryRow>) =>
  new Set([...rows].map((r) => (JSON.parse(r.text) as { orderId: string }).orderId));

describe('content dedup on etcd mode 3', () => {
  it('drops duplicates across two pipelines sharing the set', async () => {
    const namespace = `${uniqueName('twg-dedup')}/`;
    const [ca, cb] = [await onEtcd(namespace), await onEtcd(namespace)];
    const first: SourceRecord[] = [];
    const retries: SourceRecord[] = [];
    append(first, 0, 10, 1);
    append(retries, 5, 15, 2);
    const [ta, tb] = [new Map<string, MemoryRow>(), new Map<string, MemoryRow>()];
    const a = await build(ordersSource([first]), {
      secondaries: 1,
      tables: [ta],
      coordination: ca,
      config: { dedup: { orders: ORDERS } },
    });
    const sa = await a.pipeline.run();
    // The second pipeline reads the producer's retries from another partition.
    const b = await build(ordersSource([[], retries]), {
      secondaries: 1,
      tables: [tb],
      coordination: cb,
      config: { dedup: { orders: ORDERS } },
    });
    const sb = await b.pipeline.run();
    expect(sa.raw.durableRecords + sb.raw.durableRecords).toBe(20);
    expect(sb.dedup[0]).toMatchObject({ checked: 10, dropped: 5, skipped: 0 });
    expect(ta.size + tb.size).toBe(15);
    expect(new Set([...ids(ta.values()), ...ids(tb.values())]).size).toBe(15);
    await Promise.all([ca.close(), cb.close()]);
  });

  it('two of three members killed: dedup degrades to off and ingest goes on; restarted, it resumes', async () => {
    const c = await coordination({
      mode: 3,
      endpoints: cluster.endpoints,
      namespace: `${uniqueName('twg-dedup')}/`,
      callTimeoutMs: 1000,
      healthIntervalMs: 200,
    });
    const p0: SourceRecord[] = [];
    const p1: SourceRecord[] = [];
    const source = ordersSource([p0, p1]);
    source.endless = true;
    const table = new Map<string, MemoryRow>();
    const built = await build(source, {
      secondaries: 1,
      tables: [table],
      coordination: c,
      config: { dedup: { orders: ORDERS } },
    });
    const running = built.pipeline.run();
    const stats = () => built.pipeline.stats();
    const dedup = () => stats().dedup[0];
    const wait = (check: () => boolean, what: string) =>
      waitFor(check, () => `${what} (now ${JSON.stringify(dedup())})`, { timeoutMs: 30_000 });

    // Healthy: partition 1 carries the retries of partition 0's orders.
    append(p0, 0, 5, 1);
    append(p1, 0, 5, 2);
    await wait(() => stats().raw.durableRecords === 10 && dedup()?.dropped === 5, 'five dropped');
    await wait(() => table.size === 5, 'five rows delivered');

    await member('kill-member', 2);
    await member('kill-member', 3);
    await waitFor(() => c.health().kind === 'no-quorum', 'no quorum');
    append(p0, 5, 10, 1);
    append(p1, 5, 10, 2);
    // Raw and the secondary go on; the retries pass, counted as skipped.
    await wait(() => stats().raw.durableRecords === 20, 'raw holding all twenty');
    await wait(() => table.size === 15 && (dedup()?.skipped ?? 0) >= 10, 'dedup skipped');
    expect(dedup()?.dropped).toBe(5);
    expect(built.log.some((l) => l.includes('seen-set is unavailable'))).toBe(true);

    await member('start-member', 2);
    await member('start-member', 3);
    await waitFor(() => c.health().kind === 'quorum', 'quorum again', { timeoutMs: 30_000 });
    // The pipeline's seen-set (the same copy, by name and bound) answers again
    // before the next batch is looked up.
    const probe = c.binarySet?.('dedup/orders', { maxEntries: ORDERS.maxEntries });
    await waitFor(
      () => {
        try {
          probe?.getMany(new Uint8Array(16), 1);
          return true;
        } catch {
          return false;
        }
      },
      'the set answering again',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    append(p0, 10, 15, 1);
    append(p1, 10, 15, 2);
    await wait(() => stats().raw.durableRecords === 30 && dedup()?.dropped === 10, 'dedup resumed');
    await wait(() => table.size === 20, 'twenty rows');
    await built.pipeline.stop();
    await running;
    await c.close();
  });
});
