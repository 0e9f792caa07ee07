import { RawSegmentSink, type RawSegmentSinkOptions } from '@thalweg/sink-files';
import { PARQUET_FILES } from './parquet-format.js';

/** The Parquet sink's options: the raw segment sink's, but the writer is always inline. */
export type ParquetSinkOptions = Omit<RawSegmentSinkOptions, 'writer'>;

/**
 * Opens the Parquet file sink on `options.dir`: the raw segment sink of
 * @thalweg/sink-files (its ack lane, group commit, durable write with fsync,
 * atomic rename and directory fsync, directory manifest with each file's
 * CRC32C, index, read by offset window and directory lock) writing each
 * group commit as one zstd Parquet file (parquet-format.ts). Its descriptor
 * is `flush-close` / `readable`, so it can hold the primary-raw role.
 *
 * The writer runs inline: the Parquet encoder is a WebAssembly module on
 * the calling thread, which the raw sink's worker thread does not load.
 */
export function openParquetSink(options: ParquetSinkOptions): Promise<RawSegmentSink> {
  return RawSegmentSink.open({ ...options, writer: 'inline' }, { format: PARQUET_FILES });
}
