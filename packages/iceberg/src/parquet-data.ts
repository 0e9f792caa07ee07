import { tableFromIPC, type RecordBatch } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { IcebergError } from './errors.js';

/**
 * Decodes one Parquet data file into Arrow record batches with parquet-wasm
 * (arrow-rs compiled to WebAssembly, zstd included: the codec Iceberg writers
 * default to), through an Arrow IPC stream into apache-arrow. `columns`
 * projects by name; `expectedRows` is the manifest's record_count, checked
 * so a file shorter than its manifest says fails here instead of leaving a
 * silent gap in a replay.
 */
export function readParquetBatches(
  bytes: Uint8Array,
  path: string,
  expectedRows: number,
  columns?: readonly string[],
): RecordBatch[] {
  let batches: RecordBatch[];
  try {
    const options =
      columns === undefined
        ? { batchSize: 1 << 20 }
        : { batchSize: 1 << 20, columns: [...columns] };
    batches = tableFromIPC(readParquet(bytes, options).intoIPCStream()).batches;
  } catch (e) {
    throw new IcebergError('TWG_ICEBERG_PARQUET_CORRUPT', path, `does not decode: ${String(e)}`, {
      cause: e,
    });
  }
  const rows = batches.reduce((n, b) => n + b.numRows, 0);
  if (rows !== expectedRows) {
    throw new IcebergError(
      'TWG_ICEBERG_PARQUET_CORRUPT',
      path,
      `holds ${rows} rows, its manifest entry says ${expectedRows}`,
    );
  }
  return batches;
}
