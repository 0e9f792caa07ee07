import { join } from 'node:path';
import { sinkId, type SourcePartition } from '@thalweg/connector-core';
import { openTopology, type PipelineStats } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { fakeZerobus, fromJson, zerobus } from '@thalweg/sink-zerobus';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { serveTelemetry } from '@thalweg/telemetry';
import { auditDemo, type DemoAudit } from './audit-demo.js';
import { CurrentTopology } from './demo-telemetry.js';
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
  /** Serves `/metrics`, `/live` and `/ready` while the demo runs (`--port`). */
  readonly telemetry?: { readonly port: number; readonly host: string };
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
const ZEROBUS = 'zerobus-events';

/**
 * The main job: a generated, replayable source -> durable Arrow IPC raw
 * segments on local disk -> a Zerobus secondary over the fake transport,
 * with acknowledgement latency and a dead stream mid-run, coverage kept in
 * LevelDB next to raw. Then an audit reads raw and the coverage back.
 */
export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const current = new CurrentTopology();
  const server =
    options.telemetry === undefined ? null : await serveTelemetry(current, options.telemetry);
  if (server !== null) {
    options.progress(`telemetry at ${server.url}/metrics (and /live, /ready)`);
  }
  try {
    return await runTopologies(options, current);
  } finally {
    await server?.close();
  }
}

async function runTopologies(options: DemoOptions, current: CurrentTopology): Promise<DemoSummary> {
  const topic = 'demo';
  const source = new GeneratedSource({ topic, ...options });
  const coverageDir = join(options.dir, 'coverage');
  const transport = fakeZerobus({
    ackLatencyMs: options.ackLatencyMs,
    bandwidthBytesPerSec: 200 * 1024 * 1024,
    faults: (opened) =>
      opened === 0 && options.failAtWait > 0
        ? [{ op: 'wait', nth: options.failAtWait, failure: 'poison-stream' }]
        : [],
  });
  const events = BatchSchema.define({
    fields: [
      { name: 'partition', type: column.int32, nullable: false },
      { name: 'offset', type: column.int64, nullable: false },
      { name: 'note', type: column.utf8, nullable: true },
    ],
    recordId: 'hex',
  });
  const open = (role: 'both' | 'recovery') =>
    openTopology({
      source: { role: 'source', open: () => source },
      raw: rawSegments({ dir: join(options.dir, 'raw'), coverageDir }),
      secondaries: {
        [ZEROBUS]: zerobus({
          table: 'main.demo.events',
          schema: events,
          transport,
          row: fromJson((row: object) => row),
          streams: 1,
          rebuild: { baseDelayMs: 400 },
          // A small lane: while the dead stream is rebuilt, the lane sheds to
          // coverage gaps instead of holding up raw, and recovery repairs them.
          lane: { maxQueuedBatches: 8 },
        }),
      },
      log: options.progress,
      config: {
        maxBatchRecords: options.batchSize,
        recovery: { role, windowRecords: 10_000 },
      },
    });

  const total = options.partitions * options.recordsPerPartition;
  const ingest = await open('both');
  current.show(ingest);
  const stats = await withProgress(ingest, (s) => progressLine(s, total), options.progress);
  const zerobusStats = stats.sinks[ZEROBUS];
  const coalesce = zerobusStats?.streams[0]?.coalesceP50 ?? null;
  // Recovery as its own role: replay what the secondary missed from raw.
  const recovery = await open('recovery');
  current.show(recovery);
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
    sinks: [RAW, sinkId(ZEROBUS)],
    sourceName: source.cluster,
  });
  const elapsed = stats.elapsedMs;
  return {
    records_in: stats.source.records,
    raw_durable: stats.raw.durableRecords,
    zerobus_delivered: stats.secondaries[0]?.deliveredRecords ?? 0,
    zerobus_shed: stats.secondaries[0]?.shedRecords ?? 0,
    zerobus_rebuilds: zerobusStats?.rebuilds ?? 0,
    recovered: repaired.recovery?.recordsReplayed ?? 0,
    quarantined: sumCounts(stats.quarantine.byReason, repaired.quarantine.byReason),
    records_per_s: Math.round((stats.raw.durableRecords * 1000) / Math.max(1, elapsed)),
    elapsed_ms: Math.round(elapsed),
    raw_coalesce: Math.round((stats.rawSink?.coalesce ?? 0) * 100) / 100,
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

/** What a run reports progress from: a pipeline, or a declared topology with its parts' statistics. */
interface Runnable<St extends PipelineStats> {
  run(options: { readonly untilCaughtUp?: boolean }): Promise<St>;
  stats(): St;
}

async function withProgress<St extends PipelineStats>(
  pipeline: Runnable<St>,
  line: (stats: St) => string,
  progress: (line: string) => void,
  options: { readonly untilCaughtUp?: boolean } = {},
): Promise<St> {
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
