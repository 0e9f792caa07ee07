import { nodeSegmentFs, type SegmentFs } from '@thalweg/sink-files';
import type { ConfirmTarget, SourceBatch } from '@thalweg/connector-core';
import {
  CONTRACT_CLUSTER,
  contractRecordId,
  describeSinkContract,
  type HeldRecord,
  type SinkFault,
  type SinkSubject,
} from '@thalweg/contracts';
import { openParquetSink } from '../../src/index.js';
import { ID, quiet, tempDir } from '../helpers.js';

const text = new TextDecoder();

/** The real file system with one fault armed at a time on `create`, the durable write's first step. */
function faultyFs(): { fs: SegmentFs; arm: (fault: SinkFault) => void } {
  let armed: SinkFault | null = null;
  return {
    fs: {
      ...nodeSegmentFs,
      create: async (path) => {
        const fault = armed;
        if (fault === 'transient') armed = null;
        if (fault !== null)
          throw Object.assign(new Error(`EIO: injected (${fault})`), { code: 'EIO' });
        return nodeSegmentFs.create(path);
      },
    },
    arm: (fault) => (armed = fault),
  };
}

async function parquetSubject(
  target: ConfirmTarget<'primary-raw'>,
  dir: string,
): Promise<SinkSubject<'primary-raw', SourceBatch>> {
  const faults = faultyFs();
  const sink = await openParquetSink({
    id: ID,
    dir,
    cluster: CONTRACT_CLUSTER,
    confirm: target,
    fs: faults.fs,
    retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
    log: quiet,
  });
  const recordsOf = (records: readonly { offset: number; bytes: Uint8Array }[], bad?: number) =>
    records.map((r, i) => ({
      offset: i === 0 && bad !== undefined ? bad : r.offset,
      key: null,
      value: r.bytes,
      timestamp: 0,
      headers: [],
    }));
  return {
    sink,
    batch: (records, span) => ({ span, records: recordsOf(records) }),
    // The Parquet files on disk, read back through the sink and checked against their checksums.
    held: async () => {
      const out: HeldRecord[] = [];
      for (const { partition, spans } of await sink.held()) {
        for (const span of spans) {
          for await (const batch of sink.read(span)) {
            for (const r of batch.records) {
              out.push({
                idHex: contractRecordId(partition, r.offset, r.value),
                value: text.decode(r.value),
              });
            }
          }
        }
      }
      return out;
    },
    inject: (fault) => faults.arm(fault),
    malformed: (records, span) => ({ span, records: recordsOf(records, span.end) }),
    reopen: (next) => parquetSubject(next, dir),
  };
}

describeSinkContract('Parquet sink', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  faults: ['transient', 'fatal'],
  refusesMalformed: true,
  restarts: true,
  open: async (target) => parquetSubject(target, await tempDir()),
});
