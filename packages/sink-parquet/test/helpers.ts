import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  offsetSpan,
  rawAnchor,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import type { RawSegmentSink } from '@thalweg/sink-files';
import { onTestFinished } from 'vitest';
import { openParquetSink, type ParquetSinkOptions } from '../src/index.js';

export const ID = sinkId('raw');
export const CLUSTER = 'cluster-p';
export const quiet = (): void => undefined;

/** A fresh directory under the OS temp dir, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-sink-parquet-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export function record(offset: number): SourceRecord {
  return {
    offset,
    key: offset % 2 === 0 ? Buffer.from(`k${offset}`) : null,
    value: Buffer.from(`value-${offset}`),
    timestamp: 1_700_000_000_000 + offset,
    headers: offset % 3 === 0 ? [['trace', Buffer.from(`t${offset}`)]] : [],
  };
}

export function batchOf(topic: string, partition: number, start: number, end: number): SourceBatch {
  return {
    span: offsetSpan(topic, partition, start, end),
    records: Array.from({ length: end - start }, (_, i) => record(start + i)),
  };
}

export function anchor(batch: SourceBatch): Confirm<'primary-raw'> {
  return rawAnchor(batch.span);
}

export function countingTarget(): ConfirmTarget<'primary-raw'> & { applied: number } {
  const target = {
    applied: 0,
    apply: async () => {
      target.applied++;
    },
  };
  return target;
}

export function openSink(
  dir: string,
  options: Partial<ParquetSinkOptions> = {},
): Promise<RawSegmentSink> {
  return openParquetSink({
    id: ID,
    dir,
    cluster: CLUSTER,
    confirm: countingTarget(),
    log: quiet,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    ...options,
  });
}

export async function readAll(
  sink: RawSegmentSink,
  topic: string,
  partition: number,
  start = 0,
  end = Number.MAX_SAFE_INTEGER,
): Promise<{ batches: SourceBatch[]; offsets: number[]; values: string[] }> {
  const batches: SourceBatch[] = [];
  for await (const b of sink.read(offsetSpan(topic, partition, start, end))) batches.push(b);
  const records = batches.flatMap((b) => [...b.records]);
  return {
    batches,
    offsets: records.map((r) => r.offset),
    values: records.map((r) => Buffer.from(r.value).toString()),
  };
}
