import { connect } from 'node:net';
import { RecordBatchReader } from 'apache-arrow';
import { benchLine, round } from '@thalweg/test-services';
import { IpcStreamSource } from '@thalweg/source-ipc-stream';
import { encodedStream, serveBytes } from './stream-fixture.js';

interface Run {
  readonly records: number;
  readonly ms: number;
}

/**
 * The baseline: apache-arrow's own `RecordBatchReader` over the socket,
 * each batch's rows counted and its payload column's bytes touched. It
 * decodes and does nothing else, so the difference to the source is the
 * source's own cost: bounds checks, numbering, and each row rendered as a
 * JSON record.
 */
async function arrowReader(port: number): Promise<Run> {
  const started = performance.now();
  const socket = connect({ host: '127.0.0.1', port });
  const reader = await RecordBatchReader.from(socket);
  let records = 0;
  let bytes = 0;
  for await (const batch of reader) {
    records += batch.numRows;
    // A utf8 column's values are its bytes.
    const payload = batch.getChildAt(1)?.data[0]?.values as Uint8Array | undefined;
    bytes += payload?.byteLength ?? 0;
  }
  if (bytes === 0 && records > 0) throw new Error('the baseline read no payload bytes');
  return { records, ms: performance.now() - started };
}

/** The source: `IpcStreamSource.batches()` over the same kind of socket, value bytes counted. */
async function ipcStreamSource(port: number): Promise<Run> {
  const started = performance.now();
  const source = new IpcStreamSource({
    connection: { kind: 'tcp', host: '127.0.0.1', port },
    topic: 'bench',
  });
  let records = 0;
  let bytes = 0;
  for await (const batch of source.batches(new AbortController().signal)) {
    records += batch.records.length;
    for (const r of batch.records) bytes += r.value.byteLength;
  }
  if (bytes === 0 && records > 0) throw new Error('the source yielded no value bytes');
  return { records, ms: performance.now() - started };
}

/**
 * ipc-stream-source: one pre-encoded stream served by a node TCP server,
 * read `rounds` times by each reader, interleaved; the best of each
 * compared, in stream MB per second (the same bytes for both).
 */
export async function readRatio(
  rows: number,
  batchRows: number,
  payloadBytes: number,
  rounds: number,
): Promise<void> {
  const bytes = encodedStream(rows, batchRows, payloadBytes);
  const { port, server } = await serveBytes(bytes);
  try {
    let best = { source: Infinity, baseline: Infinity };
    let records = 0;
    for (let i = 0; i < rounds; i++) {
      const baseline = await arrowReader(port);
      const source = await ipcStreamSource(port);
      if (baseline.records !== rows || source.records !== rows) {
        throw new Error(`read ${baseline.records} / ${source.records} of ${rows} rows`);
      }
      records = source.records;
      best = {
        source: Math.min(best.source, source.ms),
        baseline: Math.min(best.baseline, baseline.ms),
      };
    }
    const mb = bytes.byteLength / (1024 * 1024);
    const mbPerS = mb / (best.source / 1000);
    const baselineMbPerS = mb / (best.baseline / 1000);
    benchLine({
      bench: 'ipc-stream-source',
      records,
      stream_mb: round(mb, 1),
      payload_bytes: payloadBytes,
      batch_rows: batchRows,
      rounds,
      mb_per_s: round(mbPerS, 1),
      baseline_mb_per_s: round(baselineMbPerS, 1),
      ratio: round(mbPerS / baselineMbPerS, 3),
      target_ratio: 0.9,
    });
  } finally {
    server.close();
  }
}
