import type { OffsetSpan, RecordColumns } from '@thalweg/connector-core';

export {
  columnsLayout as packLayout,
  type ColumnsLayout as PackLayout,
} from '@thalweg/connector-core';

/**
 * A source batch packed for the writer: its records as columns in one
 * ArrayBuffer (connector-core record-columns.ts, which gives the layout), so
 * handing it to the writer thread is one transfer (no structured clone of
 * per-record objects), and the envelope's Arrow columns are views into it
 * (no copy on the writer's side either). `buffer` comes from raw's pool
 * (connector-core's BufferPool) and can be longer than `bytes`.
 */
export interface PackedBatch extends RecordColumns {
  readonly span: OffsetSpan;
}
