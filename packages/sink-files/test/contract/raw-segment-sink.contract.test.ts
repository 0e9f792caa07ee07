import {
  ColumnarBatch,
  ColumnsWriter,
  type ConfirmTarget,
  type SourceBatch,
} from '@thalweg/connector-core';
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

/**
 * How the subject hands batches over: as record objects, or as columns
 * (connector-core's ColumnarBatch, as the Kafka source does), which raw
 * packs by copying regions.
 */
type Shape = 'records' | 'columns';

const columns = new ColumnsWriter();
function shaped(batch: SourceBatch, shape: Shape): SourceBatch {
  return shape === 'records' ? batch : columns.write(batch);
}

async function rawSubject(
  target: ConfirmTarget<'primary-raw'>,
  dir: string,
  writer: 'inline' | 'worker',
  shape: Shape = 'records',
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
    batch: (records, span) =>
      shaped(
        {
          span,
          records: records.map((r) => ({
            offset: r.offset,
            key: null,
            value: r.bytes,
            timestamp: 0,
            headers: [],
          })),
        },
        shape,
      ),
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
    malformed: (records, span) => {
      const batch = {
        span,
        records: records.map((r, i) => ({
          offset: i === 0 ? span.end : r.offset,
          key: null,
          value: r.bytes,
          timestamp: 0,
          headers: [],
        })),
      };
      if (shape === 'records') return batch;
      // Columns made elsewhere than a writer (which would refuse this): the
      // same record out of order and outside the span, for raw's own check.
      const [first, ...rest] = batch.records;
      const sorted = columns.write({
        span: { ...span, end: span.end + 1 },
        records: first === undefined ? [] : [...rest, first],
      });
      return ColumnarBatch.over(span, sorted.columns);
    },
    reopen: (next) => rawSubject(next, dir, writer, shape),
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

describeSinkContract('RawSegmentSink, worker writer, columnar batches', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  refusesMalformed: true,
  restarts: true,
  open: async (target) => rawSubject(target, await tempDir(), 'worker', 'columns'),
});

describeSinkContract('RawSegmentSink, inline writer, columnar batches', {
  lane: 'primary-raw',
  replay: 'deduplicated',
  faults: ['transient', 'fatal'],
  refusesMalformed: true,
  restarts: true,
  open: async (target) => rawSubject(target, await tempDir(), 'inline', 'columns'),
});
