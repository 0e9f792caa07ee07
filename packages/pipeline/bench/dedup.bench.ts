import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDerivation, sinkId } from '@thalweg/connector-core';
import { coordination, type BackupStore, type Coordination } from '@thalweg/coordination';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { Pipeline, secondary, type PipelineConfigInput } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { FakeTransportFactory, ZerobusSink } from '@thalweg/sink-zerobus';
import { BatchSchema, column, jsonDerivation, type ArrowBatch } from '@thalweg/stream-arrow';
import { BenchSource, emit, median } from './bench-source.js';

/**
 * Content dedup's cost (ADR 0036): the same batches through the same
 * pipeline (raw segment files, one Zerobus secondary on the fake transport)
 * with dedup off (the baseline) and on, against mode 1 (in process) and
 * against the three-member etcd cluster (THALWEG_ETCD_ENDPOINTS). One in 20
 * offsets of partitions 1-3 repeats partition 0's order at that offset: an
 * upstream retry on another partition. Targets: etcd at least 100k
 * records/s batched; mode 1 at least 0.9 of the baseline. Mode 1 runs with
 * the secondary's derivation on the ingest thread and on a worker thread
 * (`json`, as a Zerobus part declares it); `cores_used` is the process's
 * CPU time over wall time, so a run that has both cores busy says so.
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

const schema = BatchSchema.define({
  fields: [
    { name: 'orderId', type: column.utf8, nullable: false },
    { name: 'eventTime', type: column.int64, nullable: false },
    { name: 'pad', type: column.utf8, nullable: false },
  ],
  recordId: 'hex',
});

type Backend = 'none' | 'mode-1' | 'etcd';

interface Run {
  readonly recordsPerS: number;
  readonly lookupsPerS: number;
  readonly dropped: number;
  /** CPU time of every thread of the process over the run's wall time. */
  readonly cores: number;
}

/** Where the secondary derives: the ingest thread (`row`) or a worker thread (`json`). */
type Derivation = 'main' | 'thread';

async function run(backend: Backend, on: Derivation): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-dedup-'));
  const source = new BenchSource(PARTITIONS, RECORDS / PARTITIONS, BATCH, RECORD_BYTES, orders);
  const quiet = (): void => undefined;
  const c = await open(backend);
  const derivation = jsonDerivation({
    schema,
    cluster: 'bench',
    log: quiet,
    onCallingThread: on === 'main',
  });
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
        secondary<ArrowBatch>({
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
          derive: (batch) => runDerivation(derivation.derive, 'bench', batch),
        }),
      ],
    });
    const started = performance.now();
    const cpu = process.cpuUsage();
    const stats = await pipeline.run();
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const d = stats.dedup[0];
    return {
      recordsPerS: stats.raw.durableRecords / seconds,
      lookupsPerS: (d?.checked ?? 0) / seconds,
      dropped: d?.dropped ?? 0,
      cores: (used.user + used.system) / 1e6 / seconds,
    };
  } finally {
    await derivation.close();
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

// etcd with the derivation on the ingest thread; mode 1 both ways, each
// against its own baseline.
const VARIANTS = [
  ['none', 'main'],
  ['mode-1', 'main'],
  ['etcd', 'main'],
  ['none', 'thread'],
  ['mode-1', 'thread'],
] as const;
const key = (backend: Backend, on: Derivation): string => `${backend}/${on}`;
await run('mode-1', 'main'); // warm-up
await run('mode-1', 'thread');
const samples = new Map<string, Run[]>();
for (let i = 0; i < ROUNDS; i++) {
  for (const [backend, on] of VARIANTS) {
    const runs = samples.get(key(backend, on)) ?? [];
    runs.push(await run(backend, on));
    samples.set(key(backend, on), runs);
  }
}
const medianOf = (backend: Backend, on: Derivation, of: (r: Run) => number): number =>
  median((samples.get(key(backend, on)) ?? []).map(of));
for (const [backend, on] of VARIANTS) {
  if (backend === 'none') continue;
  const rate = medianOf(backend, on, (r) => r.recordsPerS);
  const baseline = medianOf('none', on, (r) => r.recordsPerS);
  emit({
    bench: 'dedup',
    backend,
    batch: BATCH,
    records: RECORDS,
    records_per_s: Math.round(rate),
    lookups_per_s: Math.round(medianOf(backend, on, (r) => r.lookupsPerS)),
    dropped: samples.get(key(backend, on))?.[0]?.dropped ?? 0,
    baseline: 'same batches without dedup',
    derivation: on === 'main' ? 'ingest thread' : 'worker thread',
    baseline_records_per_s: Math.round(baseline),
    ratio: Number((rate / baseline).toFixed(3)),
    cores_used: Number(medianOf(backend, on, (r) => r.cores).toFixed(2)),
    baseline_cores_used: Number(medianOf('none', on, (r) => r.cores).toFixed(2)),
    target: backend === 'etcd' ? 'records_per_s >= 100000' : 'ratio >= 0.9',
  });
}
