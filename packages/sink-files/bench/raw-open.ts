import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  NO_CONFIRM,
  NO_HEADERS,
  offsetSpan,
  sinkId,
  type SourceRecord,
} from '@thalweg/connector-core';
import { checkRaw, RawSegmentSink } from '@thalweg/sink-files';

const RECORD_BYTES = 4096;
const BATCH_RECORDS = 256;
const OPENS = 5;

/**
 * `raw-open`: writes `mb` MB of raw (worker writer, default segment bounds),
 * then times what the recovery role pays to start: `open_ms`, the median of
 * OPENS opens (the manifest and a size per segment), against `full_scan_ms`,
 * one pass that reads and checks every segment (what open did before the
 * manifest, and what `thalweg raw verify` does). The page cache is warm for
 * both: the scan's cost here is CPU and copies, not the disk.
 */
export async function rawOpenBench(mb: number): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-sink-files-open-'));
  const options = {
    id: sinkId('bench-open'),
    dir,
    cluster: 'bench',
    confirm: { apply: async () => undefined },
    log: () => undefined,
  };
  try {
    const value = Buffer.alloc(RECORD_BYTES, 7);
    const batches = Math.ceil((mb * 1e6) / (RECORD_BYTES * BATCH_RECORDS));
    const writer = await RawSegmentSink.open(options);
    for (let b = 0; b < batches; b++) {
      const partition = b % 4;
      const start = Math.floor(b / 4) * BATCH_RECORDS;
      const records: SourceRecord[] = Array.from({ length: BATCH_RECORDS }, (_, i) => ({
        offset: start + i,
        key: null,
        value,
        timestamp: 1_700_000_000_000 + start + i,
        headers: NO_HEADERS,
      }));
      const span = offsetSpan('open', partition, start, start + BATCH_RECORDS);
      await writer.submit({ span, records }, span, NO_CONFIRM);
    }
    await writer.close();
    const opens: number[] = [];
    let segments = 0;
    let bytes = 0;
    for (let i = 0; i < OPENS; i++) {
      const started = performance.now();
      const sink = await RawSegmentSink.open({ ...options, writer: 'inline' });
      opens.push(performance.now() - started);
      segments = sink.segments().length;
      bytes = sink.segments().reduce((n, s) => n + s.bytes, 0);
      await sink.close();
    }
    opens.sort((a, b) => a - b);
    const openMs = opens[Math.floor(OPENS / 2)] as number;
    const scanStart = performance.now();
    const check = await checkRaw(dir, { checksums: true });
    const fullScanMs = performance.now() - scanStart;
    if (check.damage.length > 0)
      throw new Error(`bench raw is damaged: ${check.damage[0]?.reason}`);
    return {
      bench: 'raw-open',
      segments,
      raw_mb: Number((bytes / 1e6).toFixed(0)),
      open_ms: Number(openMs.toFixed(1)),
      full_scan_ms: Number(fullScanMs.toFixed(0)),
      ratio: Number((fullScanMs / openMs).toFixed(0)),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
