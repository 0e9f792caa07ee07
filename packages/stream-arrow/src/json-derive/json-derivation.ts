import {
  compiledWorker,
  OffThread,
  packedBuffers,
  packBatch,
  type Derivation,
  type SourceBatch,
} from '@thalweg/connector-core';
import { BatchSchema } from '../batch-schema.js';
import type { EncodedBatch } from '../encoded-batch.js';
import type { JsonFields } from './json-fields.js';
import {
  JsonDeriver,
  type JsonDerivePlan,
  type PackedBatch,
  type PackedDerived,
} from './packed-derive.js';

export interface JsonDerivationOptions {
  readonly schema: BatchSchema;
  /** Each column's source in the payload (see `JsonFields`); by default the key of its name. */
  readonly fields?: JsonFields;
  /** The source's cluster (the part's context gives it), which record ids are hashed from. */
  readonly cluster: string;
  /** Run on the calling thread rather than a worker thread (the same bytes either way). */
  readonly onCallingThread?: boolean;
  readonly log: (line: string) => void;
}

/** A derivation on its own thread, and how to stop that thread. */
export interface JsonDerivation {
  readonly derive: Derivation<EncodedBatch>;
  close(): Promise<void>;
}

/**
 * A JSON -> Arrow derivation declared as data (a schema and a field
 * mapping), run on a worker thread: each raw batch's records are packed into
 * one buffer (transferred, not copied), parsed, mapped, checked and built
 * there, and come back as IPC bytes ready to send. The ingest thread packs
 * and hands over; the parse, the columns, the record ids and the encoding
 * happen beside it. Records refused there are quarantined as the calling
 * thread would (`decode`, `contract`), and where the thread is missing or
 * dies the calling thread derives with the same code: the same bytes.
 */
export function jsonDerivation(options: JsonDerivationOptions): JsonDerivation {
  const plan: JsonDerivePlan = {
    schema: { fields: options.schema.fields, recordId: options.schema.recordId },
    ...(options.fields === undefined ? {} : { fields: options.fields }),
    cluster: options.cluster,
  };
  // Checked here, so a bad mapping is refused where it is declared, not on the thread.
  const here = new JsonDeriver(plan);
  const thread =
    options.onCallingThread === true
      ? null
      : new OffThread<PackedBatch, PackedDerived>({
          entry: workerEntry(),
          name: 'stream-arrow: the JSON derivation thread',
          log: options.log,
          workerData: plan,
        });
  thread?.start();
  const arrow = options.schema.arrow;
  const derive: Derivation<EncodedBatch> = async (batch, context) => {
    const derived = await deriveOn(thread, here, batch);
    for (const note of derived.quarantined) {
      const record = batch.records[note.index];
      if (record !== undefined) context.quarantine(record, note.reason, note.detail);
    }
    if (derived.ipc === null) return null;
    return { kind: 'ipc-stream', ipc: derived.ipc, numRows: derived.rows, schema: arrow };
  };
  return { derive, close: async () => thread?.close() };
}

function deriveOn(
  thread: OffThread<PackedBatch, PackedDerived> | null,
  here: JsonDeriver,
  batch: SourceBatch,
): Promise<PackedDerived> | PackedDerived {
  const { topic, partition } = batch.span;
  const packed: PackedBatch = { topic, partition, records: packBatch(batch) };
  if (thread === null) return here.derive(packed);
  // The buffers go to the thread: deriving here again packs afresh.
  return thread.run(packed, packedBuffers(packed.records), () =>
    here.derive({ topic, partition, records: packBatch(batch) }),
  );
}

/** The compiled `json-derive-worker.js` (see `compiledWorker`). */
function workerEntry(): URL {
  return compiledWorker(import.meta.url, 'json-derive-worker.js', '../../dist/json-derive');
}
