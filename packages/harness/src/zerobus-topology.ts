import { join } from 'node:path';
import { sinkId, type SourceBatch } from '@thalweg/connector-core';
import type { Derived } from '@thalweg/pipeline';
import {
  FakeTransportFactory,
  ZerobusSinkError,
  type Fault,
  type StreamField,
  type TransportFactory,
  type ZerobusTransport,
} from '@thalweg/sink-zerobus';
import { BatchBuilder, BatchSchema, column, jsonRecordsToBatch } from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { CLUSTER } from './harness-topology.js';

/*
 * The second secondary: a Zerobus sink over the fake transport whose server
 * persists every batch before acknowledging it, so what it acknowledged
 * survives the child's SIGKILL and the parent can audit it.
 */

export const ZEROBUS = sinkId('zerobus-events');
export const ZEROBUS_TABLE = 'main.harness.events';
/** Where the fake server keeps its log, under the harness directory. */
export const ZEROBUS_SUBDIR = 'zerobus';
/** The record id column jsonRecordsToBatch writes (hex). */
export const RECORD_ID_COLUMN = '_twg_record_id';
/** Acknowledgement latency of the fake server: a few ms, so a lane is always owed acks. */
export const ZEROBUS_ACK_LATENCY_MS = 4;

export const ZEROBUS_FIELDS: readonly StreamField[] = [
  { name: 'id', type: 'utf8', nullable: false },
  { name: 'n', type: 'int64', nullable: false },
  { name: RECORD_ID_COLUMN, type: 'utf8', nullable: false },
];

const builder = new BatchBuilder(
  BatchSchema.define({
    fields: [
      { name: 'id', type: column.utf8, nullable: false },
      { name: 'n', type: column.int64, nullable: false },
    ],
    recordId: 'hex',
  }),
);

/** The row of a harness payload: its unique id and n (the pad is dropped). */
function row(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const v = value as { id?: unknown; n?: unknown };
  return { id: v.id, n: v.n };
}

/** Deterministic (recovery derives the same raw batch again), ids from the raw record. */
export function toZerobusBatch(batch: SourceBatch): Derived<RecordBatch> {
  return jsonRecordsToBatch(builder, CLUSTER, batch, row);
}

export function zerobusDir(dir: string): string {
  return join(dir, ZEROBUS_SUBDIR);
}

/**
 * The fake transport factory of one child: the k-th stream it opens (the
 * first, then each rebuild) dies with an injected poison-stream failure at
 * its `poisonWaits[k]`-th durable wait. `onPoison` hears of each injection
 * that fired: the dead stream throws the same error on every later call,
 * so each error is counted once.
 */
export function harnessZerobusFactory(
  dir: string,
  poisonWaits: readonly number[],
  onPoison: () => void,
): { readonly factory: TransportFactory; readonly close: () => Promise<void> } {
  const faults = (openIndex: number): readonly Fault[] => {
    const nth = poisonWaits[openIndex];
    return nth === undefined ? [] : [{ op: 'wait', nth, failure: 'poison-stream' }];
  };
  const inner = new FakeTransportFactory({
    ackLatencyMs: ZEROBUS_ACK_LATENCY_MS,
    faults,
    server: { persistDir: zerobusDir(dir) },
  });
  const seen = new WeakSet<object>();
  const count = (error: unknown): never => {
    if (
      error instanceof ZerobusSinkError &&
      error.failure === 'poison-stream' &&
      error.message.includes('injected') &&
      !seen.has(error)
    ) {
      seen.add(error);
      onPoison();
    }
    throw error;
  };
  const factory: TransportFactory = {
    open: async (spec) => {
      const t: ZerobusTransport = await inner.open(spec);
      return {
        submit: (ipc) => t.submit(ipc).catch(count),
        waitForOffset: (offset) => t.waitForOffset(offset).catch(count),
        flush: () => t.flush().catch(count),
        close: () => t.close(),
      };
    },
  };
  return { factory, close: () => inner.server.close() };
}
