import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDerivation, sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { RawSegmentSink } from '@thalweg/sink-files';
import { FakeTransportFactory, ZerobusSink } from '@thalweg/sink-zerobus';
import {
  BatchBuilder,
  BatchSchema,
  column,
  jsonDerivation,
  jsonRecordsToBatch,
  type ArrowBatch,
} from '@thalweg/stream-arrow';
import { Pipeline, secondary } from '@thalweg/pipeline';
import { BenchSource, emit, median } from './bench-source.js';

/**
 * Raw throughput with a healthy secondary and with one that never
 * acknowledges (its lane fills and sheds to gaps). A stalled secondary must
 * not slow raw: stalled over healthy at least 0.9. It usually comes out
 * above 1, because a healthy secondary shares the CPU (derivation, Arrow
 * encoding) while a stalled one's lane sheds without deriving; the raw-only
 * line shows that CPU cost. `threaded` is the healthy secondary with its
 * derivation declared as data and run on a worker thread (`jsonDerivation`):
 * the ingest thread only packs each batch and sends the bytes it gets back.
 */
const RECORDS = 120_000;
const PARTITIONS = 4;
const RECORD_BYTES = 256;
const ROUNDS = 3;

const schema = BatchSchema.define({
  fields: [
    { name: 'p', type: column.int32, nullable: false },
    { name: 'o', type: column.int64, nullable: false },
    { name: 'pad', type: column.utf8, nullable: false },
  ],
  recordId: 'hex',
});
const builder = new BatchBuilder(schema);

type Mode = 'none' | 'healthy' | 'threaded' | 'stalled';

async function run(secondaryMode: Mode, columnar = false): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-bench-iso-'));
  const source = new BenchSource(
    PARTITIONS,
    RECORDS / PARTITIONS,
    500,
    RECORD_BYTES,
    undefined,
    columnar,
  );
  const quiet = (): void => undefined;
  const threaded =
    secondaryMode === 'threaded' ? jsonDerivation({ schema, cluster: 'bench', log: quiet }) : null;
  const factory = new FakeTransportFactory(
    secondaryMode === 'stalled' ? { ackLatencyMs: 'manual', maxInflight: 4 } : { ackLatencyMs: 5 },
  );
  try {
    const pipeline = await Pipeline.open({
      source,
      coverage: new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('zb')] }),
      log: quiet,
      config: { shutdown: { secondaryDrainMs: 0 } },
      primaryRaw: (confirm) =>
        RawSegmentSink.open({ id: sinkId('raw'), dir, cluster: 'bench', confirm, log: quiet }),
      secondaries:
        secondaryMode === 'none'
          ? []
          : [
              secondary<ArrowBatch>({
                open: (target) =>
                  new ZerobusSink<'secondary'>({
                    id: sinkId('zb'),
                    config: { table: 'main.bench.events', streams: 2 },
                    fields: [
                      { name: 'p', type: 'int32', nullable: false },
                      { name: 'o', type: 'int64', nullable: false },
                      { name: 'pad', type: 'utf8', nullable: false },
                      { name: '_twg_record_id', type: 'utf8', nullable: false },
                    ],
                    factory,
                    confirm: target,
                    log: quiet,
                  }),
                derive: (batch) =>
                  threaded === null
                    ? jsonRecordsToBatch(builder, 'bench', batch)
                    : runDerivation(threaded.derive, 'bench', batch),
              }),
            ],
    });
    const started = performance.now();
    const stats = await pipeline.run();
    const seconds = (performance.now() - started) / 1000;
    return stats.raw.durableRecords / seconds;
  } finally {
    await threaded?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const MODES: readonly Mode[] = ['none', 'healthy', 'threaded', 'stalled'];
const samples: Record<Mode, number[]> = { none: [], healthy: [], threaded: [], stalled: [] };
await run('healthy'); // warm-up
await run('threaded');
for (let i = 0; i < ROUNDS; i++) {
  for (const mode of MODES) samples[mode].push(await run(mode));
}
const rawOnly = median(samples.none);
const healthy = median(samples.healthy);
const threaded = median(samples.threaded);
const stalled = median(samples.stalled);
emit({
  bench: 'secondary-isolation',
  records: RECORDS,
  record_bytes: RECORD_BYTES,
  raw_only_rec_s: Math.round(rawOnly),
  healthy_secondary_rec_s: Math.round(healthy),
  threaded_secondary_rec_s: Math.round(threaded),
  stalled_secondary_rec_s: Math.round(stalled),
  ratio: Number((stalled / healthy).toFixed(3)),
  target_ratio: 0.9,
  healthy_over_raw_only: Number((healthy / rawOnly).toFixed(3)),
  threaded_over_raw_only: Number((threaded / rawOnly).toFixed(3)),
  target_over_raw_only: 0.6,
});

// The same raw-only and threaded runs with the batches written as columns,
// as the Kafka source hands them over (ADR 0044): raw copies regions and
// the derivation packs off the columns, with no record made.
const columnar: Record<'none' | 'threaded', number[]> = { none: [], threaded: [] };
await run('threaded', true); // warm-up
for (let i = 0; i < ROUNDS; i++) {
  for (const mode of ['none', 'threaded'] as const) columnar[mode].push(await run(mode, true));
}
const columnarRawOnly = median(columnar.none);
const columnarThreaded = median(columnar.threaded);
emit({
  bench: 'secondary-isolation',
  records: RECORDS,
  record_bytes: RECORD_BYTES,
  source: 'columnar',
  raw_only_rec_s: Math.round(columnarRawOnly),
  threaded_secondary_rec_s: Math.round(columnarThreaded),
  threaded_over_raw_only: Number((columnarThreaded / columnarRawOnly).toFixed(3)),
  target_over_raw_only: 0.6,
});
