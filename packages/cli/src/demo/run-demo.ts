import {
  assertPrimaryRaw,
  assertSourceCanFeedRaw,
  PositionTracker,
  rawAnchor,
  sinkId,
  type ConfirmTarget,
  type SourcePartition,
} from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { GeneratedSource } from './generated-source.js';
import { NdjsonSegmentSink } from './ndjson-segment-sink.js';

export interface DemoOptions {
  readonly dir: string;
  readonly partitions: number;
  readonly recordsPerPartition: number;
  readonly batchSize: number;
  readonly payloadBytes: number;
  readonly progress: (line: string) => void;
}

export interface DemoSummary {
  readonly records_in: number;
  readonly raw_durable: number;
  readonly raw_missing: number;
  readonly committed: Record<string, number>;
  readonly batches: number;
  readonly bursts: number;
  readonly coalesce_mean: number;
  readonly records_per_s: number;
  readonly elapsed_ms: number;
}

/**
 * The smallest end-to-end topology the delivery seam allows: a replayable
 * store-managed source -> a durable primary-raw sink, with the source cursor
 * stored only after raw's durable acknowledgement, then an audit that reads
 * raw back and checks that every record is there and no cursor leads it.
 */
export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const topic = 'demo';
  const source = new GeneratedSource({ topic, ...options, partitions: options.partitions });
  assertSourceCanFeedRaw(source, 'source');

  const tracker = new PositionTracker();
  const store = new InMemoryCoverage({ sinks: [] });
  const cursorKey = (p: SourcePartition) => ({
    source: 'generated',
    topic: p.topic,
    partition: p.partition,
  });

  // The only place the source position moves: after raw's durable ack.
  const onRawDurable: ConfirmTarget<'primary-raw'> = {
    async apply(confirm) {
      if (confirm.kind !== 'raw-anchor') return;
      const next = tracker.markDurable(confirm.span);
      if (next !== null)
        await store.saveCursor(cursorKey(confirm.span), source.cursorAt(confirm.span, next));
    },
  };
  const raw = new NdjsonSegmentSink(sinkId('raw'), options.dir, source.cluster, onRawDurable);
  assertPrimaryRaw(raw.descriptor, 'primaryRaw');

  const started = performance.now();
  const total = options.partitions * options.recordsPerPartition;
  let submitted = 0;
  let batches = 0;
  let nextReport = 0;
  const abort = new AbortController();
  for await (const batch of source.batches(abort.signal)) {
    tracker.register(batch.span);
    await raw.submit(batch, batch.span, rawAnchor(batch.span));
    submitted += batch.records.length;
    batches += 1;
    if (submitted >= nextReport) {
      options.progress(
        `submitted ${submitted}/${total} records, ${raw.bursts.length} durable bursts so far`,
      );
      nextReport += Math.max(1, Math.floor(total / 5));
    }
  }
  await raw.close();
  const elapsed = performance.now() - started;

  // Audit: read raw back; the committed cursor must not lead what raw holds.
  let durable = 0;
  const committed: Record<string, number> = {};
  for (let partition = 0; partition < options.partitions; partition++) {
    const at = { topic, partition };
    const offsets = new Set<number>();
    for await (const b of raw.read({ ...at, start: 0, end: options.recordsPerPartition })) {
      for (const r of b.records) offsets.add(r.offset);
    }
    durable += offsets.size;
    const cursor = await store.loadCursor(cursorKey(at));
    const next = cursor?.nextOffset ?? 0;
    for (let o = 0; o < next; o++) {
      if (!offsets.has(o))
        throw new Error(
          `audit: cursor of ${topic}/${partition} is at ${next} but raw lacks offset ${o}`,
        );
    }
    committed[`${topic}/${partition}`] = next;
  }
  await source.close();
  await store.close();
  return {
    records_in: total,
    raw_durable: durable,
    raw_missing: total - durable,
    committed,
    batches,
    bursts: raw.bursts.length,
    coalesce_mean: Number((batches / Math.max(1, raw.bursts.length)).toFixed(2)),
    records_per_s: Math.round((total * 1000) / elapsed),
    elapsed_ms: Math.round(elapsed),
  };
}
