import type { RawPart } from '@thalweg/connector-core';
import { rawSegments, type RawSegmentsPartOptions, type RawSinkStats } from '@thalweg/sink-files';
import { PARQUET_FILES } from './parquet-format.js';

/** What `parquetFiles` takes: the raw segments part's options, but the format and writer. */
export type ParquetFilesPartOptions = Omit<RawSegmentsPartOptions, 'format' | 'writer'>;

/**
 * zstd Parquet files in a local directory as the primary-raw part of a
 * topology (`openTopology` in @thalweg/pipeline): the `rawSegments` part of
 * @thalweg/sink-files in the Parquet format, so everything but the file
 * format (durability, manifest, coverage home next to the directory) is
 * the same.
 */
export function parquetFiles(options: ParquetFilesPartOptions): RawPart<RawSinkStats> {
  return rawSegments({ ...options, writer: 'inline', format: PARQUET_FILES });
}
