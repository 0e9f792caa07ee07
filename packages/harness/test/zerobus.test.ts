import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordIdHasher, offsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { encodeIpcStream } from '@thalweg/stream-arrow';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { overclaimedRanges } from '../src/coverage-audit.js';
import { HarnessTopic } from '../src/harness-topic.js';
import { CLUSTER, payload, payloadId } from '../src/harness-topology.js';
import type { RawContents } from '../src/raw-audit.js';
import { heldByZerobus, readZerobus } from '../src/zerobus-audit.js';
import {
  harnessZerobusFactory,
  toZerobusBatch,
  ZEROBUS,
  ZEROBUS_FIELDS,
  ZEROBUS_TABLE,
} from '../src/zerobus-topology.js';

const TOPIC = 'harness-topic';
const RUN = 'run1';
const SPEC = { table: ZEROBUS_TABLE, fields: ZEROBUS_FIELDS };

/** Produced records `from`..`to - 1` of partition 1 as a source batch, plus one that is not JSON. */
function sourceBatch(from: number, to: number): SourceBatch {
  const records = [];
  for (let o = from; o < to; o++) {
    records.push({
      offset: o,
      key: null,
      value: Buffer.from(payload(o, RUN)),
      timestamp: 0,
      headers: [],
    });
  }
  records.push({
    offset: to,
    key: null,
    value: Buffer.from('{not json'),
    timestamp: 0,
    headers: [],
  });
  return { span: offsetSpan(TOPIC, 1, from, to + 1), records };
}

/** Raw as the audit reads it: record ids recomputed from each record. */
function rawOf(batch: SourceBatch): RawContents {
  const hasher = new RecordIdHasher(CLUSTER, TOPIC, 1);
  const held = new Map(
    batch.records.map((r) => [
      r.offset,
      {
        recordId: hasher.id(r.offset, r.value).toString('hex'),
        payloadId: payloadId(r.offset, RUN),
      },
    ]),
  );
  return { records: [new Map(), held], copies: held.size, errors: [] };
}

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'twg-harness-zerobus-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Derives `batch` as the child does and has the durable fake server acknowledge it; what it then holds. */
async function acknowledged(batch: SourceBatch) {
  const derived = toZerobusBatch(batch);
  if (derived.batch === null) throw new Error('no rows derived');
  const server = harnessZerobusFactory(dir, [], () => undefined);
  const stream = await server.factory.open(SPEC);
  await stream.waitForOffset(await stream.submit(encodeIpcStream(derived.batch)));
  await stream.close();
  await server.close();
  return { quarantined: derived.quarantined, zerobus: await readZerobus(dir) };
}

describe('the Zerobus secondary of the harness', () => {
  it('derives rows whose record ids are the ones the audit recomputes from raw', async () => {
    const batch = sourceBatch(10, 13);
    const { quarantined, zerobus } = await acknowledged(batch);
    expect(quarantined).toMatchObject([{ offset: 13, reason: 'decode' }]);
    const raw = rawOf(batch);
    const ids = [10, 11, 12].map((o) => raw.records[1]?.get(o)?.recordId);
    expect([...zerobus.recordIds].sort()).toEqual([...ids].sort());
    expect([...zerobus.payloadIds].sort()).toEqual([10, 11, 12].map((o) => payloadId(o, RUN)));
    expect(zerobus).toMatchObject({ batches: 1, rows: 3 });

    // Coverage claiming 13 (quarantined, never sent) is an over-claim; [10, 13) is not.
    const held = heldByZerobus(raw, zerobus, { topic: TOPIC, payloadAt: () => undefined });
    const view = (end: number) => ({
      store: 'pipeline-durable',
      key: { sink: ZEROBUS, topic: TOPIC, partition: 1 },
      ranges: [{ start: 10, end }],
    });
    expect(overclaimedRanges([view(13)], (_s, p, o) => held(p, o))).toEqual([]);
    expect(overclaimedRanges([view(14)], (_s, p, o) => held(p, o))).toEqual([
      'pipeline-durable:zerobus-events/harness-topic/1:[10,14) lacks 13',
    ]);
  });

  it('checks a claim over records raw lacks against the records produced there', async () => {
    // The child died after Zerobus acknowledged [10, 13) and before raw made
    // 12 durable: raw holds 10 and 11, the run produced 10..12.
    const batch = sourceBatch(10, 13);
    const { zerobus } = await acknowledged(batch);
    const raw = rawOf({ ...batch, records: batch.records.filter((r) => r.offset < 12) });
    const produced = {
      topic: TOPIC,
      payloadAt: (p: number, o: number) => (p === 1 && o < 15 ? payload(o, RUN) : undefined),
    };
    const held = heldByZerobus(raw, zerobus, produced);
    expect([10, 11, 12, 13, 14].map((o) => held(1, o))).toEqual([true, true, true, false, false]);
    // Without the produced records, 12 could not be shown held.
    const rawOnly = heldByZerobus(raw, zerobus, { topic: TOPIC, payloadAt: () => undefined });
    expect(rawOnly(1, 12)).toBe(false);
  });

  it('gives the payload a Kafka run produced at each offset', () => {
    vi.stubEnv('THALWEG_KAFKA_BROKERS', 'localhost:1');
    const topic = new HarnessTopic('t', 4, RUN, 'g');
    vi.unstubAllEnvs();
    topic.produced = 10;
    // Record i is at partition i % 4, offset floor(i / 4).
    expect(topic.payloadAt(1, 0)).toBe(payload(1, RUN));
    expect(topic.payloadAt(1, 2)).toBe(payload(9, RUN));
    expect(topic.payloadAt(2, 2)).toBeUndefined();
    expect(topic.payloadAt(4, 0)).toBeUndefined();
  });

  it('poisons the k-th stream at its chosen wait and counts each injection once', async () => {
    let poisons = 0;
    const server = harnessZerobusFactory(dir, [2], () => {
      poisons += 1;
    });
    const derived = toZerobusBatch(sourceBatch(0, 2));
    if (derived.batch === null) throw new Error('no rows derived');
    const ipc = encodeIpcStream(derived.batch);
    const first = await server.factory.open(SPEC);
    await first.waitForOffset(await first.submit(ipc));
    const lost = await first.submit(ipc);
    await expect(first.waitForOffset(lost)).rejects.toMatchObject({ failure: 'poison-stream' });
    // The dead stream fails every later call with the same error: still one injection.
    await expect(first.submit(ipc)).rejects.toMatchObject({ failure: 'poison-stream' });
    await expect(first.flush()).rejects.toMatchObject({ failure: 'poison-stream' });
    expect(poisons).toBe(1);
    await first.close();
    const rebuilt = await server.factory.open(SPEC);
    await rebuilt.waitForOffset(await rebuilt.submit(ipc));
    await rebuilt.waitForOffset(await rebuilt.submit(ipc));
    await rebuilt.close();
    await server.close();
    expect(poisons).toBe(1);
    // Acknowledged: the first stream's first batch and the rebuilt stream's two.
    expect(await readZerobus(dir)).toMatchObject({ batches: 3, rows: 6 });
  });

  it('reads nothing before any child acknowledged a batch', async () => {
    expect(await readZerobus(dir)).toMatchObject({ batches: 0, rows: 0 });
  });
});
