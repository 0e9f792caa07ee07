import type { ConfirmTarget, SourceBatch } from '@thalweg/connector-core';
import {
  CONTRACT_CLUSTER,
  contractRecordId,
  describeSinkContract,
  type HeldRecord,
  type SinkFault,
  type SinkSubject,
} from '@thalweg/contracts';
import { nodeSegmentFs, RawSegmentSink, type SegmentFs } from '../../src/index.js';
import { ID, quiet, tempDir } from '../helpers.js';

const text = new TextDecoder();

/**
 * The real file system, with one fault armed at a time on `create` (the
 * first step of making a segment durable): `transient` fails the next call
 * only, `fatal` every call from then on (a disk that is gone).
 */
class FaultyFs {
  private armed: SinkFault | null = null;
  readonly fs: SegmentFs = {
    ...nodeSegmentFs,
    create: async (path) => {
      const fault = this.armed;
      if (fault === 'transient') this.armed = null;
      if (fault !== null)
        throw Object.assign(new Error(`EIO: injected (${fault})`), { code: 'EIO' });
      return nodeSegmentFs.create(path);
    },
  };

  arm(fault: SinkFault): void {
    this.armed = fault;
  }
}

async function rawSubject(
  target: ConfirmTarget<'primary-raw'>,
  dir: string,
  writer: 'inline' | 'worker',
): Promise<SinkSubject<'primary-raw', SourceBatch>> {
  const faults = new FaultyFs();
  const sink = await RawSegmentSink.open({
    id: ID,
    dir,
    cluster: CONTRACT_CLUSTER,
    confirm: target,
    writer,
    ...(writer === 'inline' ? { fs: faults.fs } : {}),
    retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
    log: quiet,
  });
  return {
    sink,
    batch: (records, span) => ({
      span,
      records: records.map((r) => ({
        offset: r.offset,
        key: null,
        value: r.bytes,
        timestamp: 0,
        headers: [],
      })),
    }),
    // Raw's own read path: the segment files on disk, checked against their checksums.
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
    // A record outside the span the batch claims.
    malformed: (records, span) => ({
      span,
      records: records.map((r, i) => ({
        offset: i === 0 ? span.end : r.offset,
        key: null,
        value: r.bytes,
        timestamp: 0,
        headers: [],
      })),
    }),
    reopen: (next) => rawSubject(next, dir, writer),
  };
}

describeSinkContract('RawSegmentSink, inline writer', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  faults: ['transient', 'fatal'],
  refusesMalformed: true,
  restarts: true,
  open: async (target) => rawSubject(target, await tempDir(), 'inline'),
});

describeSinkContract('RawSegmentSink, worker writer', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  refusesMalformed: true,
  restarts: true,
  open: async (target) => rawSubject(target, await tempDir(), 'worker'),
});
