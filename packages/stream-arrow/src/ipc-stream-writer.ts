import { Message, RecordBatchStreamWriter, type RecordBatch, type Schema } from 'apache-arrow';
import { RecordBatch as BatchHeader } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import {
  END_OF_STREAM,
  frameIpcMessage,
  framedMetadataBytes,
  writeFramedMetadata,
} from './ipc-message-framing.js';

/** Each schema's framed message, encoded once: a builder sends the same schema with every batch. */
const schemaMessages = new WeakMap<Schema, Uint8Array>();

/**
 * Writes a schema message, one record batch and the end marker as one
 * IPC stream: the same bytes as apache-arrow's `RecordBatchStreamWriter`,
 * written straight into one allocation of the exact size (not zeroed
 * first), where apache-arrow's writer gathers dozens of chunks, then
 * zero-fills a buffer and copies them in. apache-arrow still lays the
 * batch out (`VectorAssembler`) and encodes the flatbuffers.
 *
 * A batch with dictionary-encoded columns needs dictionary messages
 * before it; it goes through apache-arrow's writer unchanged.
 *
 * A schema's message is encoded the first time the schema is seen and kept
 * for as long as the schema object lives: like apache-arrow's writers, this
 * takes a schema (its metadata included) as fixed once it has been written.
 */
export function writeIpcStream(batch: RecordBatch): Uint8Array<ArrayBuffer> {
  if (batch.schema.dictionaries.size > 0) {
    return RecordBatchStreamWriter.writeAll([batch]).toUint8Array(true) as Uint8Array<ArrayBuffer>;
  }
  const schema = schemaMessage(batch.schema);
  const layout = VectorAssembler.assemble(batch);
  const header = new BatchHeader(
    batch.numRows,
    layout.nodes,
    layout.bufferRegions,
    null,
    layout.variadicBufferCounts,
    batch.metadata,
  );
  const metadata = Message.encode(Message.from(header, layout.byteLength));
  const bodyAt = schema.byteLength + framedMetadataBytes(metadata.byteLength);
  const size = bodyAt + layout.byteLength + END_OF_STREAM.byteLength;
  // Its own ArrayBuffer (never a slice of Node's pool), so a caller may transfer it.
  const out = new Uint8Array(Buffer.allocUnsafeSlow(size).buffer, 0, size);
  out.set(schema, 0);
  writeFramedMetadata(out, schema.byteLength, metadata);
  const buffers = layout.buffers;
  const regions = layout.bufferRegions;
  for (let i = 0; i < buffers.length; i++) {
    const region = regions[i];
    const view = buffers[i];
    if (region === undefined || view === undefined) continue;
    const at = bodyAt + region.offset;
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    out.set(bytes, at);
    out.fill(0, at + bytes.byteLength, at + region.length);
  }
  out.set(END_OF_STREAM, size - END_OF_STREAM.byteLength);
  return out;
}

function schemaMessage(schema: Schema): Uint8Array {
  let framed = schemaMessages.get(schema);
  if (framed === undefined) {
    framed = frameIpcMessage(Message.encode(Message.from(schema)));
    schemaMessages.set(schema, framed);
  }
  return framed;
}
