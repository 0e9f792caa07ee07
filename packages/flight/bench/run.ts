// `pnpm --filter @thalweg/flight bench`: one JSON line.
// Needs the Flight test server: THALWEG_FLIGHT_URL (set -a && . /tmp/svc.env).
//
// flight-sink: BATCHES batches of ROWS rows (PAYLOAD_BYTES each) written to a
// fresh dataset whose PutResults the server delays by ACK_MS (DoAction
// configure). `pipelined` is the FlightSink: many batches in flight on one
// DoPut, confirmed by its ack lane. `serial` is the same DoPut written one
// batch at a time, each PutResult awaited before the next batch. The ratio is
// what pipelining buys against a server whose acknowledgement is slow;
// coalesce_p50 is the median burst the lane confirmed per durable step.
// THALWEG_BENCH_BATCHES, THALWEG_BENCH_ROWS and THALWEG_BENCH_ROUNDS override the sizes.
import {
  derivedCoverage,
  sinkId,
  type ConfirmTarget,
  type OffsetSpan,
} from '@thalweg/connector-core';
import { benchLine, flight, round, uniqueName } from '@thalweg/test-services';
import {
  Field,
  Int64,
  RecordBatch,
  Schema,
  Utf8,
  makeData,
  Struct,
  vectorFromArray,
} from 'apache-arrow';
import { FlightSink, arrowBytes, flightClient, type FlightClient } from '@thalweg/flight';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const ACK_MS = 20;
const BATCHES = env('THALWEG_BENCH_BATCHES', 600);
const SERIAL_BATCHES = Math.max(10, Math.floor(BATCHES / 10));
const ROWS = env('THALWEG_BENCH_ROWS', 64);
const PAYLOAD_BYTES = 1024;
const ROUNDS = env('THALWEG_BENCH_ROUNDS', 3);
const ID = sinkId('bench');

const SCHEMA = new Schema([
  new Field('id', new Int64(), false),
  new Field('payload', new Utf8(), false),
]);

function batchOf(first: number): RecordBatch {
  const ids = vectorFromArray(
    Array.from({ length: ROWS }, (_, i) => BigInt(first + i)),
    new Int64(),
  );
  const text = 'x'.repeat(PAYLOAD_BYTES);
  const payloads = vectorFromArray(
    Array.from({ length: ROWS }, () => text),
    new Utf8(),
  );
  const children = [ids.data[0], payloads.data[0]] as NonNullable<(typeof ids.data)[0]>[];
  return new RecordBatch(
    SCHEMA,
    makeData({ type: new Struct(SCHEMA.fields), length: ROWS, nullCount: 0, children }),
  );
}

/** One DoAction, its results read to the end (each answers one `{"ok":true}`). */
async function act(client: FlightClient, type: string, body: object): Promise<void> {
  const results = client.doAction(type, new TextEncoder().encode(JSON.stringify(body)));
  for (let r = await results.next(); r.done !== true; r = await results.next());
}

const configure = (client: FlightClient, dataset: string) =>
  act(client, 'configure', { dataset, ack_delay_ms: ACK_MS });
const drop = (client: FlightClient, dataset: string) => act(client, 'drop', { dataset });

const span = (i: number): OffsetSpan => ({
  topic: 'b',
  partition: 0,
  start: i * ROWS,
  end: (i + 1) * ROWS,
});

/** The sink: every batch submitted at once (the lane bounds what is in flight), then flushed. */
async function pipelined(
  client: FlightClient,
  batch: RecordBatch,
): Promise<{ mbs: number; coalesce: number }> {
  const dataset = uniqueName('twg-bench-pipelined');
  await configure(client, dataset);
  let confirmed = 0;
  const target: ConfirmTarget<'secondary'> = {
    apply: () => {
      confirmed++;
      return Promise.resolve();
    },
  };
  const sink = new FlightSink<'secondary', RecordBatch>({
    id: ID,
    client,
    dataset,
    schema: SCHEMA,
    encode: (b) => ({ batch: b, records: b.numRows, bytes: arrowBytes(b) }),
    confirm: target,
    log: () => undefined,
  });
  const started = performance.now();
  for (let i = 0; i < BATCHES; i++) await sink.submit(batch, span(i), derivedCoverage(ID, span(i)));
  await sink.flush();
  const seconds = (performance.now() - started) / 1000;
  if (confirmed !== BATCHES) throw new Error(`pipelined: ${confirmed} of ${BATCHES} confirmed`);
  const coalesce = sink.lanes()[0]?.metrics.coalesce.quantile(0.5) ?? 0;
  await sink.close();
  await drop(client, dataset);
  return { mbs: (BATCHES * arrowBytes(batch)) / 1e6 / seconds, coalesce };
}

/** One batch at a time on one DoPut: write, await its PutResult, then the next. */
async function serial(client: FlightClient, batch: RecordBatch): Promise<number> {
  const dataset = uniqueName('twg-bench-serial');
  await configure(client, dataset);
  const put = client.doPut({ type: 'path', path: [dataset] }, SCHEMA);
  const results = put.results[Symbol.asyncIterator]();
  const started = performance.now();
  for (let i = 0; i < SERIAL_BATCHES; i++) {
    const s = span(i);
    const meta = { seq: i + 1, topic: s.topic, partition: 0, start: s.start, end: s.end };
    await put.write(batch, new TextEncoder().encode(JSON.stringify(meta)));
    const ack = await results.next();
    if (ack.done === true) throw new Error('serial: the PutResults ended early');
  }
  const seconds = (performance.now() - started) / 1000;
  put.end();
  await put.done;
  await drop(client, dataset);
  return (SERIAL_BATCHES * arrowBytes(batch)) / 1e6 / seconds;
}

let url: string;
try {
  url = flight().url;
} catch (error) {
  process.stderr.write(`flight bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
const client = flightClient(url);
const batch = batchOf(0);
let best = { mbs: 0, coalesce: 0 };
let bestSerial = 0;
for (let round_ = 0; round_ < ROUNDS; round_++) {
  const p = await pipelined(client, batch);
  if (p.mbs > best.mbs) best = p;
  bestSerial = Math.max(bestSerial, await serial(client, batch));
}
client.close();
benchLine({
  bench: 'flight-sink',
  ack_ms: ACK_MS,
  pipelined_mb_s: round(best.mbs, 1),
  serial_mb_s: round(bestSerial, 1),
  ratio: round(best.mbs / bestSerial, 1),
  coalesce_p50: best.coalesce,
  target_ratio: 10,
});
