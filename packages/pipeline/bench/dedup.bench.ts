import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sinkId } from '@thalweg/connector-core';
import { coordination, type BackupStore, type Coordination } from '@thalweg/coordination';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { Pipeline, secondary, type PipelineConfigInput } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { FakeTransportFactory, ZerobusSink } from '@thalweg/sink-zerobus';
import { BatchBuilder, BatchSchema, column, jsonRecordsToBatch } from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { BenchSource, emit, median } from './bench-source.js';

/**
 * Content dedup's cost (ADR 0036): the same batches through the same
 * pipeline (raw segment files, one Zerobus secondary on the fake transport)
 * with dedup off (the baseline) and on, against mode 1 (in process) and
 * against the three-member etcd cluster (THALWEG_ETCD_ENDPOINTS). One in 20
 * offsets of partitions 1-3 repeats partition 0's order at that offset: an
 * upstream retry on another partition. Targets: etcd at least 100k
 * records/s batched; mode 1 at least 0.9 of the baseline.
 */
const RECORDS = 200_000;
const PARTITIONS = 4;
const BATCH = 5000;
const RECORD_BYTES = 256;
const ROUNDS = 3;

const orders = (p: number, o: number): string => {
  const owner = o % 20 === 0 ? 0 : p;
  return `"orderId":"${owner}-${o}","eventTime":${o}`;
};

const builder = new BatchBuilder(
  BatchSchema.define({
    fields: [
      { name: 'orderId', type: column.utf8, nullable: false },
      { name: 'eventTime', type: column.int64, nullable: false },
      { name: 'pad', type: column.utf8, nullable: false },
    ],
    recordId: 'hex',
  }),
);

type Backend = 'none' | 'mode-1' | 'etcd';

interface Run {
  readonly recordsPerS: number;
  readonly lookupsPerS: number;
  readonly dropped: number;
}

async function run(backend: Backend): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-dedup-'));
  const source = new BenchSource(PARTITIONS, RECORDS / PARTITIONS, BATCH, RECORD_BYTES, orders);
  const quiet = (): void => undefined;
  const c = await open(backend);
  const config: PipelineConfigInput = {
    shutdown: { secondaryDrainMs: 10_000 },
    ...(backend === 'none'
      ? {}
      : {
          dedup: {
            bench: {
              key: { fields: ['orderId', 'eventTime'] },
              windowMs: 60_000,
              maxEntries: 1_000_000,
              declared: { naturalKey: ['orderId'] },
            },
          },
        }),
  };
  try {
    const pipeline = await Pipeline.open({
      source,
      coverage: new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('zb')] }),
      log: quiet,
      config,
      ...(c === null ? {} : { coordination: c }),
      primaryRaw: (confirm) =>
        RawSegmentSink.open({ id: sinkId('raw'), dir, cluster: 'bench', confirm, log: quiet }),
      secondaries: [
        secondary<RecordBatch>({
          open: (target) =>
            new ZerobusSink<'secondary'>({
              id: sinkId('zb'),
              config: { table: 'main.bench.orders', streams: 2 },
              fields: [
                { name: 'orderId', type: 'utf8', nullable: false },
                { name: 'eventTime', type: 'int64', nullable: false },
                { name: 'pad', type: 'utf8', nullable: false },
                { name: '_twg_record_id', type: 'utf8', nullable: false },
              ],
              factory: new FakeTransportFactory({ ackLatencyMs: 5 }),
              confirm: target,
              log: quiet,
            }),
          derive: (batch) => jsonRecordsToBatch(builder, 'bench', batch),
        }),
      ],
    });
    const started = performance.now();
    const stats = await pipeline.run();
    const seconds = (performance.now() - started) / 1000;
    const d = stats.dedup[0];
    return {
      recordsPerS: stats.raw.durableRecords / seconds,
      lookupsPerS: (d?.checked ?? 0) / seconds,
      dropped: d?.dropped ?? 0,
    };
  } finally {
    await c?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

let namespaces = 0;

async function open(backend: Backend): Promise<Coordination | null> {
  if (backend === 'none') return null;
  if (backend === 'mode-1') return coordination({ mode: 1, backup: { store: memoryBackup() } });
  const endpoints = process.env['THALWEG_ETCD_ENDPOINTS'];
  if (endpoints === undefined || endpoints === '') {
    throw new Error('the dedup bench needs THALWEG_ETCD_ENDPOINTS (a three-member etcd cluster)');
  }
  namespaces += 1;
  // A namespace per run: every run starts with an empty seen-set, as mode 1 does.
  return coordination({
    mode: 3,
    endpoints: endpoints.split(','),
    namespace: `twg-bench-dedup/${process.pid}-${namespaces}/`,
  });
}

/** Mode 1's backup in memory: the bench measures the set, not S3. */
function memoryBackup(): BackupStore {
  let held: { body: string; etag: string } | null = null;
  return {
    read: async () => held,
    write: async (body, etag) => {
      if ((held?.etag ?? null) !== etag) return null;
      held = { body, etag: String(Number(held?.etag ?? '0') + 1) };
      return held.etag;
    },
    close: async () => undefined,
  };
}

await run('mode-1'); // warm-up
const samples: Record<Backend, Run[]> = { none: [], 'mode-1': [], etcd: [] };
for (let i = 0; i < ROUNDS; i++) {
  for (const backend of ['none', 'mode-1', 'etcd'] as const)
    samples[backend].push(await run(backend));
}
const baseline = median(samples.none.map((r) => r.recordsPerS));
for (const backend of ['etcd', 'mode-1'] as const) {
  const rate = median(samples[backend].map((r) => r.recordsPerS));
  emit({
    bench: 'dedup',
    backend,
    batch: BATCH,
    records: RECORDS,
    records_per_s: Math.round(rate),
    lookups_per_s: Math.round(median(samples[backend].map((r) => r.lookupsPerS))),
    dropped: samples[backend][0]?.dropped ?? 0,
    baseline: 'same batches without dedup',
    baseline_records_per_s: Math.round(baseline),
    ratio: Number((rate / baseline).toFixed(3)),
    target: backend === 'etcd' ? 'records_per_s >= 100000' : 'ratio >= 0.9',
  });
}
