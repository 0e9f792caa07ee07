import type { RecordBatch, Schema } from 'apache-arrow';

/**
 * A batch already encoded as an Arrow IPC stream (a schema message, one
 * record batch, the end marker), as a derivation on a worker thread hands
 * it back: a sink that sends IPC sends these bytes as they are, without
 * decoding or encoding them on the ingest thread.
 */
export interface EncodedBatch {
  readonly kind: 'ipc-stream';
  readonly ipc: Uint8Array;
  readonly numRows: number;
  /** The schema the bytes were built by (they carry it too). */
  readonly schema: Schema;
}

/** What a sink of Arrow batches takes: a batch to encode, or one encoded already. */
export type ArrowBatch = RecordBatch | EncodedBatch;

export function isEncodedBatch(batch: ArrowBatch): batch is EncodedBatch {
  return (batch as Partial<EncodedBatch>).kind === 'ipc-stream';
}
