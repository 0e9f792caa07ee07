import { join } from 'node:path';
import { sinkId, type SourcePartition } from '@thalweg/connector-core';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { Pipeline, secondary, type PipelineStats } from '@thalweg/pipeline';
import { RawSegmentSink } from '@thalweg/sink-files';
import { FakeTransportFactory, ZerobusSink, type StreamField } from '@thalweg/sink-zerobus';
import { BatchBuilder, BatchSchema, column, jsonRecordsToBatch } from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { auditDemo, type DemoAudit } from './audit-demo.js';
import { GeneratedSource } from './generated-source.js';

export interface DemoOptions {
  readonly dir: string;
  readonly partitions: number;
  readonly recordsPerPartition: number;
  readonly batchSize: number;
  readonly payloadBytes: number;
  /** Acknowledgement latency of the fake Zerobus server, in ms. */
  readonly ackLatencyMs: number;
  /** The Zerobus stream's `nth` durable wait fails as a dead stream (0: never). */
  readonly failAtWait: number;
  readonly malformedEvery: number;
  readonly progress: (line: string) => void;
}

export interface DemoSummary extends DemoAudit {
  readonly records_in: number;
  readonly raw_durable: number;
  readonly zerobus_delivered: number;
  readonly zerobus_shed: number;
  readonly zerobus_rebuilds: number;
  /** Records the recovery role replayed from raw into the secondary after ingest. */
  readonly recovered: number;
  readonly quarantined: Readonly<Record<string, number>>;
  readonly records_per_s: number;
  readonly elapsed_ms: number;
  readonly raw_coalesce: number;
  readonly zerobus_coalesce_p50: number | null;
}

const RAW = sinkId('raw');
const ZEROBUS = sinkId('zerobus-events');

const FIELDS: readonly StreamField[] = [
  { name: 'partition', type: 'int32', nullable: false },
  { name: 'offset', type: 'int64', nullable: false },
  { name: 'note', type: 'utf8', nullable: true },
  { name: '_twg_record_id', type: 'utf8', nullable: false },
];

/**
 * The main job: a generated, replayable source -> durable Arrow IPC raw
 * segments on local disk -> a Zerobus secondary over the fake transport,
 * with acknowledgement latency and a dead stream mid-run, coverage kept in
 * LevelDB next to raw. Then an audit reads raw and the coverage back.
 */
export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const topic = 'demo';
  const source = new GeneratedSource({ topic, ...options });
  const coverageDir = join(options.dir, 'coverage');
  const factory = new FakeTransportFactory({
    ackLatencyMs: options.ackLatencyMs,
    bandwidthBytesPerSec: 200 * 1024 * 1024,
    faults: (opened) =>
      opened === 0 && options.failAtWait > 0
        ? [{ op: 'wait', nth: options.failAtWait, failure: 'poison-stream' }]
        : [],
  });
  const builder = new BatchBuilder(
    BatchSchema.define({
      fields: [
        { name: 'partition', type: column.int32, nullable: false },
        { name: 'offset', type: column.int64, nullable: false },
        { name: 'note', type: column.utf8, nullable: true },
      ],
      recordId: 'hex',
    }),
  );
  const quiet = (): void => undefined;
  let zerobus: ZerobusSink<'secondary'> | undefined;
  let raw: RawSegmentSink | undefined;
  const open = async (role: 'both' | 'recovery') =>
    Pipeline.open({
      source,
      coverage: await LevelDbCoverage.open({ location: coverageDir, sinks: [RAW, ZEROBUS] }),
      log: (line) => {
        if (!line.includes('resumes at')) options.progress(line.replace(/^thalweg \w+: /, ''));
      },
      config: {
        maxBatchRecords: options.batchSize,
        // A small lane: while the dead stream is rebuilt, the lane sheds to
        // coverage gaps instead of holding up raw, and recovery repairs them.
        secondaries: { [ZEROBUS]: { maxQueuedBatches: 8 } },
        recovery: { role, windowRecords: 10_000 },
      },
      primaryRaw: async (confirm) =>
        (raw = await RawSegmentSink.open({
          id: RAW,
          dir: join(options.dir, 'raw'),
          cluster: source.cluster,
          confirm,
          log: quiet,
        })),
      secondaries: [
        secondary<RecordBatch>({
          open: (target) =>
            (zerobus = new ZerobusSink<'secondary'>({
              id: ZEROBUS,
              config: { table: 'main.demo.events', streams: 1, rebuild: { baseDelayMs: 400 } },
              fields: FIELDS,
              factory,
              confirm: target,
              log: quiet,
            })),
          derive: (batch) => jsonRecordsToBatch(builder, source.cluster, batch),
        }),
      ],
    });

  const total = options.partitions * options.recordsPerPartition;
  const ingest = await open('both');
  const stats = await withProgress(ingest, (s) => progressLine(s, total), options.progress);
  const rebuilds = (zerobus?.metrics() ?? []).reduce((n, m) => n + m.rebuilds.value, 0);
  const coalesce = zerobus?.metrics()[0]?.coalesce.quantile(0.5) ?? null;
  const rawCoalesce = raw?.stats().coalesce ?? 0;
  // Recovery as its own role: replay what the secondary missed from raw.
  const recovery = await open('recovery');
  const repaired = await withProgress(
    recovery,
    (s) =>
      `recovery: replayed ${s.recovery?.recordsReplayed ?? 0}, behind ${s.recovery?.backlog.maxLagRecords ?? 0}`,
    options.progress,
    { untilCaughtUp: true },
  );

  const partitions: SourcePartition[] = source.partitions();
  const audit = await auditDemo({
    rawDir: join(options.dir, 'raw'),
    coverageDir,
    cluster: source.cluster,
    partitions,
    recordsPerPartition: options.recordsPerPartition,
    sinks: [RAW, ZEROBUS],
    sourceName: source.cluster,
  });
  const elapsed = stats.elapsedMs;
  return {
    records_in: stats.source.records,
    raw_durable: stats.raw.durableRecords,
    zerobus_delivered: stats.secondaries[0]?.deliveredRecords ?? 0,
    zerobus_shed: stats.secondaries[0]?.shedRecords ?? 0,
    zerobus_rebuilds: rebuilds,
    recovered: repaired.recovery?.recordsReplayed ?? 0,
    quarantined: sumCounts(stats.quarantine.byReason, repaired.quarantine.byReason),
    records_per_s: Math.round((stats.raw.durableRecords * 1000) / Math.max(1, elapsed)),
    elapsed_ms: Math.round(elapsed),
    raw_coalesce: rawCoalesce,
    zerobus_coalesce_p50: coalesce,
    ...audit,
  };
}

function sumCounts(
  a: Readonly<Record<string, number | undefined>>,
  b: Readonly<Record<string, number | undefined>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of [...Object.entries(a), ...Object.entries(b)])
    out[k] = (out[k] ?? 0) + (v ?? 0);
  return out;
}

async function withProgress(
  pipeline: Pipeline,
  line: (stats: PipelineStats) => string,
  progress: (line: string) => void,
  options: { readonly untilCaughtUp?: boolean } = {},
): Promise<PipelineStats> {
  const timer = setInterval(() => {
    progress(line(pipeline.stats()));
  }, 500);
  try {
    const stats = await pipeline.run(options);
    progress(line(stats));
    return stats;
  } finally {
    clearInterval(timer);
  }
}

function progressLine(stats: PipelineStats, total: number): string {
  const sec = stats.secondaries[0];
  const rate = Math.round((stats.raw.durableRecords * 1000) / Math.max(1, stats.elapsedMs));
  return (
    `read ${stats.source.records}/${total}  raw durable ${stats.raw.durableRecords}  ` +
    `zerobus delivered ${sec?.deliveredRecords ?? 0} (shed ${sec?.shedRecords ?? 0})  ` +
    `quarantined ${Object.values(stats.quarantine.byReason).reduce((a, b) => a + b, 0)}  ` +
    `${rate} rec/s  [${stats.flow.state}]`
  );
}
