// `pnpm --filter @thalweg/sink-zerobus bench`: one JSON object per line.
// The ack lane against the fake transport: the same batches sent pipelined
// (fire-and-forget + background lane) and serially (wait for each ack before
// the next), in the same run, against a wire with a bandwidth cap. Then the
// same comparison against the real binding and the local peer (sdk-ack-lane).
import {
  Binary,
  Field,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
} from 'apache-arrow';
import { derivedCoverage, offsetSpan, sinkId } from '@thalweg/connector-core';
import { FakeTransportFactory, ZerobusSink } from '@thalweg/sink-zerobus';
import { ackLaneFields } from './ack-lane-line.js';
import { sdkAckLaneLine } from './sdk-ack-lane.js';

const ACK_MS = 20;
const BATCH_BYTES = 65_536;
const CAP_BYTES_PER_SEC = 200 * 1_000_000;
const SPEC = {
  table: 'main.bench.events',
  fields: [{ name: 'body', type: 'binary' as const, nullable: false }],
};

function batch(): RecordBatch {
  const rows = 64;
  const width = Math.floor((BATCH_BYTES - 1024) / rows);
  const data = new Uint8Array(rows * width).fill(7);
  const valueOffsets = Int32Array.from({ length: rows + 1 }, (_, i) => i * width);
  const schema = new Schema([new Field('body', new Binary(), false)]);
  const child = makeData({ type: new Binary(), length: rows, valueOffsets, data });
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields), length: rows, children: [child] }),
  );
}

const one = batch();
const ipc = tableToIPC(new Table(one), 'stream');
const mb = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);

async function serial(batches: number): Promise<number> {
  const factory = new FakeTransportFactory({
    ackLatencyMs: ACK_MS,
    bandwidthBytesPerSec: CAP_BYTES_PER_SEC,
  });
  const t = await factory.open(SPEC);
  const started = performance.now();
  for (let i = 0; i < batches; i++) await t.waitForOffset(await t.submit(ipc));
  const ms = performance.now() - started;
  await t.close();
  return mb(batches * ipc.byteLength, ms);
}

async function pipelined(batches: number): Promise<{ mbs: number; coalesceP50: number }> {
  const factory = new FakeTransportFactory({
    ackLatencyMs: ACK_MS,
    bandwidthBytesPerSec: CAP_BYTES_PER_SEC,
  });
  const id = sinkId('bench');
  const sink = new ZerobusSink<'secondary'>({
    id,
    config: { table: SPEC.table, streams: 1, channelCapacity: 1024 },
    fields: SPEC.fields,
    factory,
    confirm: { apply: async () => undefined },
    encode: () => ipc,
    log: () => undefined,
  });
  const started = performance.now();
  for (let i = 0; i < batches; i++) {
    const span = offsetSpan('bench', 0, i * 64, (i + 1) * 64);
    await sink.submit(one, span, derivedCoverage(id, span));
  }
  await sink.flush();
  const ms = performance.now() - started;
  const coalesceP50 = sink.metrics()[0]?.coalesce.quantile(0.5) ?? 0;
  await sink.close();
  return { mbs: mb(batches * ipc.byteLength, ms), coalesceP50 };
}

const serialMbs = await serial(40);
const piped = await pipelined(6000);
process.stdout.write(
  `${JSON.stringify({
    ...ackLaneFields('fake', ACK_MS, ipc.byteLength, piped, serialMbs),
    bandwidth_cap_mb_s: CAP_BYTES_PER_SEC / 1e6,
    of_cap: Number((piped.mbs / (CAP_BYTES_PER_SEC / 1e6)).toFixed(3)),
  })}\n`,
);
process.stdout.write(`${JSON.stringify(await sdkAckLaneLine(SPEC, one, ipc))}\n`);
