// `pnpm --filter @thalweg/sink-files bench`: one JSON object per line.
// The raw segment sink on the local disk, the same batches three ways in one
// run:
// - serial-flush (the baseline): inline writer, flush after every submit
//   (one segment, two fsyncs, per batch);
// - pipelined-inline: submit returns on acceptance, the writer on the same
//   thread group-commits whatever queued during the previous fsync;
// - pipelined-worker: the same with the writer thread (the default), where
//   the submitting thread only checks and packs.
// The source yields to the event loop between batches, as a network source
// does. Each run first writes as many batches of another topic through the
// same sink, the same way, and flushes: what is measured is the sustained
// rate, not a writer thread's cold JIT or the packing buffers' first
// allocation; then the garbage is collected and RECORDS records are timed. Each mode runs RUNS times; the
// line is the run with the median records/s.
//
// The batches are built before the runs (source: prebuilt), so the records
// are cold in the CPU cache when submitted, and packing them costs more
// than behind a live source, which hands over records it has just decoded.
// One more worker line builds each batch just before submitting it
// (source: fresh); its records/s includes that building. Two more lines
// (source: columnar) submit the same batches prebuilt as columns
// (connector-core's ColumnarBatch), as a source that decodes into buffers
// hands them over: raw then copies whole regions, with no per-record work
// but integer checks.
//
// The checksums' cost (ADR 0014): one more worker line, the same runs with
// and without CRC32C in back-to-back pairs of both orders; ratio_to_unchecked
// is the geometric mean of the pairs' ratios. verify_mb_per_s is a verified
// read of what a checked run wrote (every byte against its checksum, then
// every segment decoded and checked), thalweg raw verify's path, after one
// untimed pass. Then raw-open:
// see raw-open.ts (`--raw-open-mb N`, default 1024).
//
// Against the disk: disk_mb_per_s is what raw put on the disk (files, not
// payload) per second; fsync_write_mb_per_s writes as many bytes to one file
// sequentially and fsyncs once (dd bs=1M conv=fsync), right after each run on
// the same file system; ratio_to_disk is the first over the second.
// fsync_segments_mb_per_s writes the same bytes again as as many files as the
// run made segments, each with raw's commit steps (temp file, fsync, rename,
// directory fsync, a manifest line fsynced), one after the other and with no
// encoding: ratio_to_segmented says how near raw runs to its own protocol's
// ceiling on this disk, ratio_to_disk how near to the disk's.
//
// Per record:
// - submit_ns: wall time in the synchronous part of `submit` (check, pack,
//   hand-over), what the source's thread waits for raw;
// - main_cpu_ns: all CPU time of the submitting thread over the timed run
//   (the inline writer's encoding and writes included; Linux schedstat, to a
//   scheduler tick; null elsewhere). A worker's own CPU time is not in it.
import { openSync, readSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ColumnsWriter,
  NO_CONFIRM,
  recordCount,
  offsetSpan,
  sinkId,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import {
  CHECKSUM_ALGORITHM,
  checkRaw,
  RawSegmentSink,
  type RawWriterMode,
} from '@thalweg/sink-files';
import { bytesUnder, segmentedWriteMbPerS, sequentialWriteMbPerS } from './disk-ceiling.js';
import { rawOpenBench } from './raw-open.js';

const BATCH_RECORDS = 500;
const RECORDS = benchRecords(process.env['THALWEG_BENCH_RECORDS']);
const RECORD_BYTES = 256;
const PARTITIONS = 4;
const RUNS = 3;

/**
 * The records of each timed run: THALWEG_BENCH_RECORDS, else a million
 * (about 300 MB of segments). A run must be long beside the writer's fixed
 * latencies: the first segment is written only once its batches are
 * encoded, and the last one's commit ends the run with nothing beside it.
 * At 200k records (60 MB, a third of a second) those two made up much of a
 * run, and the line measured them rather than the sustained rate.
 */
function benchRecords(text: string | undefined): number {
  const n = Number(text ?? 1_000_000);
  if (!Number.isSafeInteger(n) || n <= 0 || n % BATCH_RECORDS !== 0) {
    throw new Error(
      `THALWEG_BENCH_RECORDS must be a positive multiple of ${String(BATCH_RECORDS)}, got ${String(text)}`,
    );
  }
  return n;
}

/** Batch `b` of a topic: partitions in turn, consecutive offsets in each. */
function buildBatch(topic: string, b: number): SourceBatch {
  const partition = b % PARTITIONS;
  const start = Math.floor(b / PARTITIONS) * BATCH_RECORDS;
  const records: SourceRecord[] = Array.from({ length: BATCH_RECORDS }, (_, i) => ({
    offset: start + i,
    key: Buffer.from(`key-${(start + i) % 1000}`),
    value: Buffer.alloc(RECORD_BYTES, (start + i) % 251),
    timestamp: 1_700_000_000_000 + start + i,
    headers: [['source', Buffer.from('bench')]],
  }));
  return { span: offsetSpan(topic, partition, start, start + BATCH_RECORDS), records };
}

/**
 * Where batches come from: `prebuilt` ones, built before the runs (cold in
 * the CPU cache when submitted), or `fresh` ones, built just before each
 * submit as a decoding source does (the building is in the timed run).
 */
type Source = (b: number) => SourceBatch;
const COUNT = RECORDS / BATCH_RECORDS;

function prebuilt(topic: string): Source {
  const built = Array.from({ length: COUNT }, (_, b) => buildBatch(topic, b));
  return (b) => built[b] as SourceBatch;
}

const fresh =
  (topic: string): Source =>
  (b) =>
    buildBatch(topic, b);

/**
 * Prebuilt as columns (connector-core's ColumnarBatch), as a source that
 * decodes into buffers hands them over: raw copies regions, not records.
 */
function columnar(topic: string): Source {
  const writer = new ColumnsWriter();
  const built = Array.from({ length: COUNT }, (_, b) => writer.write(buildBatch(topic, b)));
  return (b) => built[b] as SourceBatch;
}

/** CPU nanoseconds of the calling thread so far, or null where schedstat is missing. */
const threadCpu: () => number | null = (() => {
  try {
    const fd = openSync('/proc/thread-self/schedstat', 'r');
    const buffer = Buffer.alloc(128);
    return () =>
      Number(buffer.toString('latin1', 0, readSync(fd, buffer, 0, 128, 0)).split(' ')[0]);
  } catch {
    return () => null;
  }
})();

const collectGarbage = (globalThis as { gc?: () => void }).gc;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const perRecord = (ns: number | null, records: number) =>
  ns === null ? null : Math.round(ns / records);

async function submitAll(sink: RawSegmentSink, source: Source, serial: boolean) {
  let records = 0;
  let inSubmit = 0;
  for (let b = 0; b < COUNT; b++) {
    const batch = source(b);
    const at = performance.now();
    const accepted = sink.submit(batch, batch.span, NO_CONFIRM);
    inSubmit += performance.now() - at;
    await accepted;
    records += recordCount(batch);
    if (serial) await sink.flush();
    else await yieldToLoop();
  }
  return { records, inSubmit };
}

async function run(
  warmup: Source,
  data: Source,
  writer: RawWriterMode,
  serial: boolean,
  checksums = true,
  verify = false,
) {
  const dir = await mkdtemp(join(tmpdir(), 'twg-sink-files-bench-'));
  try {
    const sink = await RawSegmentSink.open(
      {
        id: sinkId('bench'),
        dir,
        cluster: 'bench',
        writer,
        confirm: { apply: async () => undefined },
        log: () => undefined,
      },
      { checksums },
    );
    await submitAll(sink, warmup, serial);
    await sink.flush();
    // The warm-up's garbage is collected now, not inside the timed run
    // (`pnpm bench` runs node with --expose-gc).
    collectGarbage?.();
    const before = sink.stats();
    const bytesBefore = bytesUnder(dir);
    const cpuStart = threadCpu();
    const started = performance.now();
    const { records, inSubmit } = await submitAll(sink, data, serial);
    await sink.close();
    const seconds = (performance.now() - started) / 1000;
    const cpuEnd = threadCpu();
    // What the timed run put on the disk.
    const diskBytes = bytesUnder(dir) - bytesBefore;
    // The disk's ceiling for the same bytes, measured right after, on the same file system.
    const ceilingMbPerS = await sequentialWriteMbPerS(dir, diskBytes);
    const stats = sink.stats();
    const segments = stats.segmentsWritten - before.segmentsWritten;
    // And for the same bytes in as many segments, each with raw's commit steps.
    const segmentedMbPerS = await segmentedWriteMbPerS(dir, diskBytes, segments);
    // A verified read of everything written: every byte against its checksum, then decoded.
    let verifyMbPerS: number | null = null;
    if (verify) {
      // One untimed pass first, as the writes have their warm-up: what is
      // measured is the sustained rate of a long verify, not its cold JIT.
      await checkRaw(dir, { checksums: true });
      const verifyStart = performance.now();
      const check = await checkRaw(dir, { checksums: true });
      if (check.damage.length > 0)
        throw new Error(`bench raw is damaged: ${check.damage[0]?.reason}`);
      verifyMbPerS = Number(
        (check.bytes / 1e6 / ((performance.now() - verifyStart) / 1000)).toFixed(0),
      );
    }
    return {
      ...(verify ? { verify_mb_per_s: verifyMbPerS } : {}),
      records_per_s: Math.round(records / seconds),
      mb_per_s: Number(((records * RECORD_BYTES) / 1e6 / seconds).toFixed(1)),
      submit_ns_per_record: Math.round((inSubmit * 1e6) / records),
      main_cpu_ns_per_record: perRecord(
        cpuStart === null || cpuEnd === null ? null : cpuEnd - cpuStart,
        records,
      ),
      disk_mb_per_s: Number((diskBytes / 1e6 / seconds).toFixed(1)),
      fsync_write_mb_per_s: Number(ceilingMbPerS.toFixed(1)),
      ratio_to_disk: Number((diskBytes / 1e6 / seconds / ceilingMbPerS).toFixed(2)),
      fsync_segments_mb_per_s: Number(segmentedMbPerS.toFixed(1)),
      ratio_to_segmented: Number((diskBytes / 1e6 / seconds / segmentedMbPerS).toFixed(2)),
      segments,
      coalesce: Number(((stats.batchesWritten - before.batchesWritten) / segments).toFixed(1)),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function median(...args: Parameters<typeof run>) {
  const results = [];
  for (let i = 0; i < RUNS; i++) results.push(await run(...args));
  results.sort((a, b) => a.records_per_s - b.records_per_s);
  return results[Math.floor(RUNS / 2)] as (typeof results)[number];
}

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
// Built on the fly, so the warm-up does not double the heap the runs collect.
const warmup = fresh('warmup');
const common = {
  bench: 'raw-segments',
  records: RECORDS,
  record_bytes: RECORD_BYTES,
  batch_records: BATCH_RECORDS,
  partitions: PARTITIONS,
  runs: RUNS,
};
// Each line's batches are built for it and dropped after: a line's heap
// holds its own source only. (With every source built up front, each
// collection in a columnar run also marked the million objects of the
// prebuilt records, a cost of the bench, not of raw.)
let rows: Source | null = prebuilt('bench');
const prebuiltRows = (): Source => rows ?? (rows = prebuilt('bench'));
const serial = await median(warmup, prebuiltRows(), 'inline', true);
emit({ ...common, mode: 'serial-flush', writer: 'inline', source: 'prebuilt', ...serial });
const pipelined = [
  ['inline', 'prebuilt', prebuiltRows],
  ['worker', 'prebuilt', prebuiltRows],
  ['worker', 'fresh', () => fresh('bench')],
  ['inline', 'columnar', () => columnar('bench')],
  ['worker', 'columnar', () => columnar('bench')],
] as const;
for (const [writer, source, build] of pipelined) {
  if (source !== 'prebuilt') rows = null;
  const piped = await median(warmup, build(), writer, false);
  emit({
    ...common,
    mode: `pipelined-${writer}`,
    writer,
    source,
    ...piped,
    baseline_records_per_s: serial.records_per_s,
    ratio: Number((piped.records_per_s / serial.records_per_s).toFixed(2)),
    target_ratio_to_disk: 0.8,
  });
}

// What the checksums cost: the worker writer with and without them, in
// CHECK_PAIRS pairs run back to back, so a noisy neighbour hits both runs of
// a pair alike. The first run of a pair measured slower whichever it was, so
// half the pairs run checked first and half unchecked first, and the ratio
// is the geometric mean of the pairs' ratios, in which that order effect
// cancels; the rates are the medians of each side.
const CHECK_PAIRS = 6;
const checked = [];
const unchecked = [];
const pairRatios: number[] = [];
for (let i = 0; i < CHECK_PAIRS; i++) {
  const first = i % 2 === 0;
  const a = await run(warmup, prebuiltRows(), 'worker', false, first, first);
  const b = await run(warmup, prebuiltRows(), 'worker', false, !first, !first);
  const [withRun, withoutRun] = first ? [a, b] : [b, a];
  checked.push(withRun);
  unchecked.push(withoutRun);
  pairRatios.push(withRun.records_per_s / withoutRun.records_per_s);
}
const mid = <T>(xs: T[], key: (x: T) => number) =>
  [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)] as T;
rows = null;
const withSums = mid(checked, (r) => r.records_per_s);
const without = mid(unchecked, (r) => r.records_per_s);
emit({
  ...common,
  runs: CHECK_PAIRS,
  mode: 'pipelined-worker',
  checksum: CHECKSUM_ALGORITHM,
  records_per_s: withSums.records_per_s,
  unchecked_records_per_s: without.records_per_s,
  ratio_to_unchecked: Number(
    Math.exp(pairRatios.reduce((n, r) => n + Math.log(r), 0) / pairRatios.length).toFixed(2),
  ),
  pair_ratios: pairRatios.map((r) => Number(r.toFixed(2))),
  verify_mb_per_s: mid(checked, (r) => r.verify_mb_per_s ?? 0).verify_mb_per_s,
});

emit(await rawOpenBench(rawOpenMb()));

/** `--raw-open-mb N` (default 1024): how much raw the open benchmark writes first. */
function rawOpenMb(): number {
  const at = process.argv.indexOf('--raw-open-mb');
  const value = at === -1 ? 1024 : Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error('--raw-open-mb takes a positive number');
  return value;
}
