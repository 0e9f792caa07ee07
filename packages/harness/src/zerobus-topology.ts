import { join } from 'node:path';
import {
  runSyncDerivation,
  sinkId,
  type DerivationResult,
  type SourceBatch,
} from '@thalweg/connector-core';
import {
  FakeTransportFactory,
  fromJson,
  rowsToBatch,
  streamFieldsOf,
  ZerobusSinkError,
  type Fault,
  type StreamField,
  type TransportFactory,
  type ZerobusTransport,
} from '@thalweg/sink-zerobus';
import { BatchBuilder, BatchSchema, column } from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { CLUSTER } from './harness-topology.js';

/*
 * The second secondary: a Zerobus sink over the fake transport whose server
 * persists every batch before acknowledging it, so what it acknowledged
 * survives the child's SIGKILL and the parent can audit it.
 */

/** The Zerobus secondary's id, as it is declared in the topology. */
export const ZEROBUS_NAME = 'zerobus-events';
export const ZEROBUS = sinkId(ZEROBUS_NAME);
export const ZEROBUS_TABLE = 'main.harness.events';
/** Where the fake server keeps its log, under the harness directory. */
export const ZEROBUS_SUBDIR = 'zerobus';
/** The record id column jsonRecordsToBatch writes (hex). */
export const RECORD_ID_COLUMN = '_twg_record_id';
/** Acknowledgement latency of the fake server: a few ms, so a lane is always owed acks. */
export const ZEROBUS_ACK_LATENCY_MS = 4;

/** The table's schema, declared once: the batches are built by it, the stream's fields derived from it. */
export const ZEROBUS_SCHEMA = BatchSchema.define({
  fields: [
    { name: 'id', type: column.utf8, nullable: false },
    { name: 'n', type: column.int64, nullable: false },
  ],
  recordId: 'hex',
});

export const ZEROBUS_FIELDS: readonly StreamField[] = streamFieldsOf(ZEROBUS_SCHEMA);

/** The row of a harness payload: its unique id and n (the pad is dropped). */
export const zerobusRow = fromJson((v: { id?: unknown; n?: unknown } | null) => ({
  id: v?.id,
  n: v?.n,
}));

/** What the Zerobus part derives from a raw batch, as the child runs it (for tests). */
export function toZerobusBatch(batch: SourceBatch): DerivationResult<RecordBatch> {
  const derive = rowsToBatch(new BatchBuilder(ZEROBUS_SCHEMA), zerobusRow, CLUSTER);
  return runSyncDerivation(derive, CLUSTER, batch);
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
