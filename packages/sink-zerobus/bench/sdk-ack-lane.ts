// The ack lane against the REAL native binding and the in-process Zerobus
// peer acknowledging each batch 50 ms after it arrives. Serial: one stream,
// submit then wait, batch after batch. Pipelined: ZerobusSink over a pool of
// streams. The binding's wait holds its stream's lock, so one stream cannot
// overlap submit and confirm: the overlap comes from the pool.
import type { RecordBatch } from 'apache-arrow';
import { derivedCoverage, offsetSpan, sinkId, type Histogram } from '@thalweg/connector-core';
import { ZerobusSink, type StreamSpec } from '@thalweg/sink-zerobus';
import { SdkTransportFactory } from '@thalweg/sink-zerobus/databricks';
import { ZerobusPeer } from '../test/peer/zerobus-peer.js';
import { ackLaneFields } from './ack-lane-line.js';

const ACK_MS = 50;
const STREAMS = 24;
const SERIAL_BATCHES = 20;
const PIPELINED_BATCHES = 640;

// The binding honours proxy variables; loopback must never go through one.
process.env['no_proxy'] = '127.0.0.1';
process.env['NO_PROXY'] = '127.0.0.1';

function factoryFor(peer: ZerobusPeer): SdkTransportFactory {
  return new SdkTransportFactory(
    {
      zerobusEndpoint: peer.endpoint,
      unityCatalogUrl: peer.unityCatalogUrl,
      clientId: 'peer-client',
      clientSecret: 'peer-secret',
      stream: { flushTimeoutMs: 30_000, connectionTimeoutMs: 10_000 },
    },
    { log: () => undefined },
  );
}

const mbs = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);

async function serial(peer: ZerobusPeer, spec: StreamSpec, ipc: Uint8Array): Promise<number> {
  const t = await factoryFor(peer).open(spec);
  const started = performance.now();
  for (let i = 0; i < SERIAL_BATCHES; i++) await t.waitForOffset(await t.submit(ipc));
  const ms = performance.now() - started;
  await t.close();
  return mbs(SERIAL_BATCHES * ipc.byteLength, ms);
}

async function pipelined(
  peer: ZerobusPeer,
  spec: StreamSpec,
  one: RecordBatch,
  ipc: Uint8Array,
): Promise<{ mbs: number; coalesceP50: number | null }> {
  const id = sinkId('bench-sdk');
  const sink = new ZerobusSink<'secondary'>({
    id,
    config: { table: spec.table, streams: STREAMS, channelCapacity: 1024 },
    fields: spec.fields,
    factory: factoryFor(peer),
    confirm: { apply: async () => undefined },
    encode: () => ipc,
    log: () => undefined,
  });
  const rows = one.numRows;
  const started = performance.now();
  for (let i = 0; i < PIPELINED_BATCHES; i++) {
    const span = offsetSpan('bench', 0, i * rows, (i + 1) * rows);
    await sink.submit(one, span, derivedCoverage(id, span));
  }
  await sink.flush();
  const ms = performance.now() - started;
  const coalesceP50 = medianOf(sink.metrics().map((m) => m.coalesce));
  await sink.close();
  return { mbs: mbs(PIPELINED_BATCHES * ipc.byteLength, ms), coalesceP50 };
}

/** The median over several histograms with the same bounds (bucket upper bound). */
function medianOf(histograms: Histogram[]): number | null {
  const first = histograms[0];
  if (first === undefined) return null;
  const totals = first.buckets().map((b, i) => ({
    le: b.le,
    count: histograms.reduce((n, h) => n + (h.buckets()[i]?.count ?? 0), 0),
  }));
  const all = totals.at(-1)?.count ?? 0;
  return totals.find((b) => b.count >= all / 2)?.le ?? null;
}

/** One JSON line, the same fields as the fake's, with `transport: "sdk"`. */
export async function sdkAckLaneLine(
  spec: StreamSpec,
  one: RecordBatch,
  ipc: Uint8Array,
): Promise<Record<string, unknown>> {
  const peer = await ZerobusPeer.start({ ackDelayMs: ACK_MS, keepRows: false });
  try {
    const serialMbs = await serial(peer, spec, ipc);
    const piped = await pipelined(peer, spec, one, ipc);
    const sent = (SERIAL_BATCHES + PIPELINED_BATCHES) * one.numRows;
    return {
      ...ackLaneFields('sdk', ACK_MS, ipc.byteLength, piped, serialMbs),
      bandwidth_cap_mb_s: null,
      of_cap: null,
      streams: STREAMS,
      // Every row the bench sent is acknowledged on the peer, and no more.
      peer_rows_match: peer.rowsAcknowledged(spec.table) === sent,
    };
  } finally {
    await peer.stop();
  }
}
