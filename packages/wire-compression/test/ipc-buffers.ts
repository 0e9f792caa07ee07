import { MessageHeader, scanIpcStream } from '@thalweg/stream-arrow';

/**
 * The body buffers of every batch of an IPC stream, read with stream-arrow's
 * message scan, for comparing a decompressed stream with pyarrow's plain one
 * and for reading fixture values without an Arrow library.
 */
export interface BatchBuffers {
  readonly dictionary: boolean;
  readonly compressed: boolean;
  readonly buffers: readonly Uint8Array[];
}

export function batchBuffers(stream: Uint8Array): BatchBuffers[] {
  const out: BatchBuffers[] = [];
  for (const message of scanIpcStream(stream)) {
    if (message.headerType === MessageHeader.Schema) continue;
    out.push({
      dictionary: message.headerType === MessageHeader.DictionaryBatch,
      compressed: message.compressed,
      buffers: message.buffers.map((b) => message.body.subarray(b.offset, b.offset + b.length)),
    });
  }
  return out;
}

export const CHECKED_COLUMNS = ['i64', 'name', 'flag', 'ts_ns', 'blob'] as const;
export type FixtureColumns = Record<(typeof CHECKED_COLUMNS)[number], unknown[]>;

/** Values of the fixture's columns, decoded from uncompressed buffers by the Arrow layout. */
export function fixtureColumns(stream: Uint8Array): FixtureColumns {
  const columns: FixtureColumns = { i64: [], name: [], flag: [], ts_ns: [], blob: [] };
  for (const batch of batchBuffers(stream).filter((b) => !b.dictionary)) {
    const buf = (i: number) => batch.buffers[i] ?? new Uint8Array(0);
    const rows = buf(6).byteLength / 8; // score: non-nullable float64
    const valid = (bitmap: Uint8Array, row: number) =>
      bitmap.byteLength === 0 || ((bitmap[row >> 3] ?? 0) & (1 << (row & 7))) !== 0;
    const i64 = (data: Uint8Array, row: number) =>
      new DataView(data.buffer, data.byteOffset).getBigInt64(row * 8, true).toString();
    const offsets = (data: Uint8Array) => new Int32Array(data.slice().buffer);
    const nameOffsets = offsets(buf(3));
    const blobOffsets = offsets(buf(14));
    for (let row = 0; row < rows; row++) {
      columns.i64.push(valid(buf(0), row) ? i64(buf(1), row) : null);
      columns.name.push(
        valid(buf(2), row)
          ? Buffer.from(buf(4).subarray(nameOffsets[row], nameOffsets[row + 1])).toString('utf8')
          : null,
      );
      columns.flag.push(valid(buf(7), row) ? valid(buf(8), row) : null);
      columns.ts_ns.push(valid(buf(11), row) ? i64(buf(12), row) : null);
      columns.blob.push(
        valid(buf(13), row)
          ? Buffer.from(buf(15).subarray(blobOffsets[row], blobOffsets[row + 1])).toString('hex')
          : null,
      );
    }
  }
  return columns;
}
