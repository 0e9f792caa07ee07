import { RecordIdHasher } from '@thalweg/connector-core';
import { RawSegmentSink } from '@thalweg/sink-files';
import { CLUSTER, decodePayload, RAW } from './harness-topology.js';

/** What raw holds at one offset. */
export interface RawRecord {
  /** The record id recomputed from raw's record (hex). */
  readonly recordId: string;
  /** The payload's unique id, or null when the payload is not a harness record. */
  readonly payloadId: string | null;
}

export interface RawContents {
  /** Per partition: offset -> the record raw holds there. */
  readonly records: readonly ReadonlyMap<number, RawRecord>[];
  /** Record copies in the segments (a record redelivered after a crash is stored again). */
  readonly copies: number;
  /** Reads that failed, e.g. TWG_RAW_RECORD_CONFLICT (two stored copies of an offset differ). */
  readonly errors: readonly string[];
}

const quiet = (): void => undefined;

/**
 * Reads a raw directory the way recovery would: a fresh sink opened on it
 * (only ever while no child is alive: one writer per directory), every
 * partition read from offset 0. Opening also removes the temp files a
 * killed writer left, which were never confirmed.
 */
export async function readRaw(
  dir: string,
  topic: string,
  partitions: number,
): Promise<RawContents> {
  const raw = await RawSegmentSink.open({
    id: RAW,
    dir,
    cluster: CLUSTER,
    confirm: { apply: async () => undefined },
    log: quiet,
  });
  const records: Map<number, RawRecord>[] = [];
  const errors: string[] = [];
  try {
    for (let partition = 0; partition < partitions; partition++) {
      const held = new Map<number, RawRecord>();
      records.push(held);
      const hasher = new RecordIdHasher(CLUSTER, topic, partition);
      try {
        const span = { topic, partition, start: 0, end: Number.MAX_SAFE_INTEGER };
        for await (const batch of raw.read(span)) {
          for (const r of batch.records) {
            held.set(r.offset, {
              recordId: hasher.id(r.offset, r.value).toString('hex'),
              payloadId: payloadIdOf(r.value),
            });
          }
        }
      } catch (error) {
        errors.push(
          `${topic}/${partition}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    let copies = 0;
    for (const segment of raw.segments()) {
      for (const b of segment.batches) if (b.span.topic === topic) copies += b.records;
    }
    return { records, copies, errors };
  } finally {
    await raw.close();
  }
}

function payloadIdOf(value: Uint8Array): string | null {
  try {
    return decodePayload(value).id;
  } catch {
    return null;
  }
}

/** The end of the run of offsets from 0 that raw holds without a hole. */
export function contiguousPrefix(held: ReadonlyMap<number, unknown>): number {
  let n = 0;
  while (held.has(n)) n += 1;
  return n;
}
