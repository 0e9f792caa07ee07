export * from './stream-watermarks.js';
export * from './batch-sink.js';
export * from './encoded-batch.js';
export * from './errors.js';
export * from './column-types.js';
export * from './batch-schema.js';
export * from './record-id-column.js';
export * from './batch-builder.js';
export * from './ipc-stream.js';
export * from './ipc-file-segment.js';
export * from './json-records.js';
export {
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  IPC_CODEC,
  type IpcBodyCodecs,
  type IpcBodyEncoder,
  type IpcCodecName,
} from './ipc-body-compression.js';
export { compressIpcBodies, decompressIpcBodies } from './ipc-batches.js';
export {
  MESSAGE_PREFIX_BYTES,
  decodeMessageHeader,
  readMessagePrefix,
  scanIpcStream,
  type MessageInfo,
  type MessagePrefix,
  type ScannedMessage,
} from './ipc-message-scan.js';
export { IPC_FILE_HEAD, IPC_FILE_TAIL, ipcLayout, type IpcLayout } from './ipc-file-layout.js';
export { schemaMessageFromFooter } from './footer-schema.js';
export { IPC_MESSAGE_PREFIX, frameIpcMessage } from './ipc-message-framing.js';
/** The header tags of `ScannedMessage.headerType` (apache-arrow's enum, of Message.fbs). */
export { MessageHeader } from 'apache-arrow';
export {
  planRows,
  planTimestamp,
  type RenderedRows,
  type RowPlan,
  type TimestampPlan,
} from './row-json.js';
export {
  IpcStreamDecoder,
  type IpcStreamDecoderOptions,
  type IpcStreamItem,
} from './ipc-stream-decoder.js';
export { recordRuns, type RecordRun, type RowPlans } from './record-runs.js';
export { rowsToBatch } from './rows-to-batch.js';
export {
  NULL_LENGTH,
  encodeHeaders,
  headersProblem,
  readHeaders,
  type DecodedHeaders,
} from '@thalweg/connector-core';
export { sourceBatchProblem, spanProblem, type SourceBatchProblem } from './source-batch-check.js';
export {
  RAW_TABLE_COLUMNS,
  RAW_TABLE_FIELDS,
  RAW_TABLE_SPAN_COLUMNS,
  RawSpanTally,
  rawBatchesOf,
  rawTableBatch,
  rawTableSchema,
  type RawTableSpan,
} from './raw-table-rows.js';
export { OffsetRuns } from './offset-runs.js';
export * from './json-derive/index.js';
