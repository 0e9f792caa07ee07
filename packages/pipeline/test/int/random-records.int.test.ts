import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  sinkId,
  type QuarantineEntry,
  type SourceHeader,
  type SourceRecord,
} from '@thalweg/connector-core';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { RawSegmentSink } from '@thalweg/sink-files';
import { kafkaSource } from '@thalweg/source-kafka';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { Pipeline, secondary, type QuarantinedRecord } from '../../src/index.js';
import { jsonRows, MemorySecondary, type MemoryRow } from '../doubles/memory-sinks.js';
import { produceExact, type ExactRecord } from './exact-producer.js';
import { CLUSTER, KafkaTopic, RAW, waitFor } from './kafka-topology.js';

/**
 * No record can halt ingest: whatever a producer puts in a record (any
 * header names, repeated or prototype-named, null header values, binary
 * keys, tombstones, records up to the byte budget), raw keeps it byte for
 * byte and the pipeline carries on; what the secondary cannot derive goes
 * to quarantine with the record whole.
 */
const PARTITIONS = 2;
const BUDGET = 512 * 1024;
/** Larger records reach raw but go to quarantine (`oversized`) instead of the secondary. */
const MAX_RECORD_BYTES = 64 * 1024;
const SECONDARY = sinkId('json-rows');
const quiet = (): void => undefined;

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const TRICKY_NAMES = [
  ...Object.getOwnPropertyNames(Object.prototype), // __proto__, constructor, toString, ...
  'thalweg.tombstone',
  'a',
  'a[1]',
  'a[2]',
  '0',
  '1',
  '10',
  '',
];

/** Deterministic filler for large values (fast-check replays a failure from its seed). */
function filled(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = seed | 1;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const bytes = (maxLength: number) => fc.uint8Array({ maxLength }).map((b) => Buffer.from(b));
const headerName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_NAMES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);
// Header values are never null here: kafkajs's producer cannot send a null
// header value (its size computation calls Buffer.byteLength(null)). Reading
// one is covered by kafkajs-headers.test.ts (source-kafka) from wire bytes.
const header: fc.Arbitrary<SourceHeader> = fc.tuple(headerName, bytes(40));
const payload = fc.oneof(
  { weight: 6, arbitrary: bytes(64) },
  { weight: 2, arbitrary: fc.constantFrom('{"n":1}', '[]', '"s"').map((s) => Buffer.from(s)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 4096, max: BUDGET - 16 * 1024 }), fc.integer())
      .map(([size, seed]) => filled(size, seed)),
  },
);
const exactRecord: fc.Arbitrary<ExactRecord> = fc.record({
  partition: fc.integer({ min: 0, max: PARTITIONS - 1 }),
  key: fc.option(bytes(24), { nil: null, freq: 3 }),
  value: fc.option(payload, { nil: null, freq: 6 }),
  timestamp: fc.integer({ min: 1_600_000_000_000, max: 1_700_000_000_000 }),
  headers: fc.array(header, { maxLength: 6 }),
});

interface Expected {
  readonly offset: number;
  readonly key: number[] | null;
  readonly value: number[];
  readonly timestamp: number;
  readonly headers: [string, number[] | null][];
  readonly tombstone: boolean;
}

const list = (b: Uint8Array) => [...b];
const headersOf = (h: readonly SourceHeader[]): [string, number[] | null][] =>
  h.map(([n, v]) => [n, v === null ? null : list(v)]);

function asRead(r: SourceRecord): Expected {
  return {
    offset: r.offset,
    key: r.key === null ? null : list(r.key),
    value: list(r.value),
    timestamp: r.timestamp,
    headers: headersOf(r.headers),
    tombstone: r.tombstone === true,
  };
}

/** What raw must read back for each partition: the records in the order they were produced. */
function expected(records: readonly ExactRecord[]): Expected[][] {
  const out = Array.from({ length: PARTITIONS }, (): Expected[] => []);
  for (const r of records) {
    const p = out[r.partition] ?? [];
    p.push({
      offset: p.length,
      key: r.key === null ? null : list(r.key),
      value: r.value === null ? [] : list(r.value),
      timestamp: r.timestamp,
      headers: headersOf(r.headers),
      tombstone: r.value === null,
    });
  }
  return out;
}

/** Produces the records into a fresh topic, runs the pipeline until all are settled, checks raw. */
async function ingest(records: readonly ExactRecord[]): Promise<void> {
  const topic = new KafkaTopic(uniqueName('random-records'), PARTITIONS);
  await topic.create();
  try {
    await produceExact(topic.producer, topic.topic, records);
    const dir = await mkdtemp(join(tmpdir(), 'twg-random-records-'));
    dirs.push(dir);
    const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({
      topic: topic.topic,
      partition,
    }));
    const quarantined: QuarantineEntry<QuarantinedRecord>[] = [];
    const rows = new Map<string, MemoryRow>();
    // kafkajs's own lines, kept to say where a slow start stood when the wait gives up.
    const kafkaLines: string[] = [];
    const started = Date.now();
    const source = kafkaSource({
      mode: 'assigned',
      brokers: kafkaBrokers(),
      cluster: CLUSTER,
      partitions,
      maxWaitTimeInMs: 100,
      logLevel: 'info',
      log: (line) => {
        kafkaLines.push(`+${String(Date.now() - started)}ms ${line.slice(0, 400)}`);
        if (kafkaLines.length > 40) kafkaLines.shift();
      },
    });
    const pipeline = await Pipeline.open({
      source,
      coverage: await LevelDbCoverage.open({
        location: join(dir, 'coverage'),
        sinks: [RAW, SECONDARY],
      }),
      config: { maxRecordBytes: MAX_RECORD_BYTES, flowControl: { byteBudget: { bytes: BUDGET } } },
      log: quiet,
      primaryRaw: (confirm) =>
        RawSegmentSink.open({
          id: RAW,
          dir: join(dir, 'raw'),
          cluster: CLUSTER,
          confirm,
          log: quiet,
        }),
      secondaries: [
        secondary<MemoryRow[]>({
          open: (confirm) =>
            new MemorySecondary(confirm, SECONDARY, { kind: 'server-ack' }, [], rows),
          derive: jsonRows,
        }),
      ],
      quarantine: async (entry) => {
        quarantined.push(entry);
      },
    });
    // Observed from the start: a halted pipeline is this test's failure, not an unhandled rejection.
    const running = pipeline.run().then(
      () => null,
      (error: unknown) => error,
    );
    let halted: unknown = null;
    void running.then((e) => (halted = e));
    const where = (): string => {
      const st = pipeline.stats();
      return (
        `(raw durable ${st.raw.durableRecords} of ${st.raw.submittedRecords} submitted, ` +
        `source read ${st.source.records}, rows ${rows.size}, quarantined ${quarantined.length}, ` +
        `flow ${JSON.stringify({ ...st.flow, budget: undefined })}, ` +
        `budget ${JSON.stringify(st.flow.budget)}, secondary ${JSON.stringify(st.secondaries[0])}, ` +
        `kafka ${JSON.stringify(source.stats())}); kafkajs said:\n${kafkaLines.join('\n')}`
      );
    };
    // Joining the throwaway group is the broker's pace, not what this test checks: a
    // join on a loaded broker has taken over 30 s in CI, so it gets its own allowance,
    // and the records theirs from the join on.
    await waitFor(
      () => halted !== null || source.stats().joins > 0,
      () => `the source to join its group ${where()}`,
      120_000,
    );
    await waitFor(
      () =>
        halted !== null ||
        (pipeline.stats().raw.durableRecords >= records.length &&
          rows.size + quarantined.length >= records.length),
      () => `${records.length} records durable in raw and settled downstream ${where()}`,
      60_000,
    );
    await pipeline.stop();
    expect(await running).toBeNull();

    const raw = await RawSegmentSink.open({
      id: RAW,
      dir: join(dir, 'raw'),
      cluster: CLUSTER,
      confirm: { apply: async () => undefined },
      log: quiet,
    });
    const read: Expected[][] = [];
    for (const p of partitions) {
      const got: Expected[] = [];
      for await (const b of raw.read({ ...p, start: 0, end: Number.MAX_SAFE_INTEGER })) {
        got.push(...b.records.map(asRead));
      }
      read.push(got);
    }
    await raw.close();
    const want = expected(records);
    expect(read).toEqual(want);

    // Every record is either a row of the secondary or quarantined whole, with a reason.
    expect(rows.size + quarantined.length).toBe(records.length);
    for (const q of quarantined) {
      expect(['decode', 'oversized']).toContain(q.reason);
      const source = want[q.record.partition]?.[q.record.offset];
      expect({
        key: q.record.key === null ? null : list(q.record.key),
        value: list(q.record.value),
        headers: headersOf(q.record.headers),
        tombstone: q.record.tombstone,
      }).toEqual({
        key: source?.key,
        value: source?.value,
        headers: source?.headers,
        tombstone: source?.tombstone,
      });
    }
  } finally {
    await topic.admin.deleteTopics({ topics: [topic.topic] }).catch(() => undefined);
    await topic.close();
  }
}

const r = (
  partition: number,
  value: string | null,
  headers: readonly SourceHeader[],
  key: Buffer | null = null,
): ExactRecord => ({
  partition,
  key,
  value: value === null ? null : Buffer.from(value),
  timestamp: 1_650_000_000_000,
  headers,
});
const b = (s: string) => Buffer.from(s);

describe('records no pipeline may halt on, through the real broker and raw segments', () => {
  it('the records of issue 13: prototype-named, repeated and generated-looking headers, a user tombstone header', async () => {
    await ingest([
      r(0, '{"n":1}', [['constructor', b('c')]]),
      r(0, 'x', [['toString', b('t')]]),
      r(0, '{"n":2}', [['__proto__', b('p')]]),
      r(1, '{"n":3}', [
        ['a', b('1')],
        ['a', b('2')],
        ['a[1]', b('3')],
      ]),
      r(1, null, [['thalweg.tombstone', b('user')]], b('deleted')),
      r(1, '{"n":4}', [['thalweg.tombstone', b('')]]),
      r(0, '', [
        ['b', b('1')],
        ['a', b('')],
        ['b', b('2')],
        ['1', b('')],
      ]),
    ]);
  }, 240_000);

  it('any random records: the pipeline never halts and raw reads every record back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(exactRecord, { minLength: 1, maxLength: 40 }), ingest),
      { numRuns: 8, endOnFailure: true },
    );
  }, 600_000);
});
