export { ICEBERG_ERROR_CODES, IcebergError, type IcebergErrorCode } from './errors.js';
export {
  RestCatalog,
  namespacePath,
  type LoadedTable,
  type RestCatalogOptions,
} from './rest-catalog.js';
export {
  findSnapshot,
  parseTableMetadata,
  quoteSnapshotIds,
  snapshotSchema,
  type IcebergField,
  type IcebergSchema,
  type PartitionSpec,
  type Snapshot,
  type TableMetadata,
} from './table-metadata.js';
export { fileStoreByScheme, localFileStore, type FileStore } from './file-store.js';
export { readAvroContainer, type AvroHeader } from './avro-container.js';
export { compileSchema, type AvroDecoder, type AvroValue } from './avro-schema.js';
export { AvroCursor } from './avro-binary.js';
export { ManifestCache } from './manifest-cache.js';
export { readManifest, readManifestList, type DataFile, type ManifestFile } from './manifest.js';
export { decodeIntegerBound, mayOverlap } from './bounds.js';
export { readParquetBatches } from './parquet-data.js';
export { mergeRuns, windowRuns, type WindowRun } from './window-runs.js';
export {
  liveDataFiles,
  planWindow,
  scanWindow,
  type IcebergSource,
  type WindowRequest,
  type WindowScan,
} from './window-scan.js';
export { IcebergRaw, type IcebergRawOptions, type RawVisibility } from './raw/iceberg-raw.js';
