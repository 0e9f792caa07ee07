import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sinkId, type SourceRecord } from '@thalweg/connector-core';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments, RawSegmentSink } from '@thalweg/sink-files';
import { Changes } from '@thalweg/test-services';
import { afterEach, describe, expect, it } from 'vitest';
import { ipcStream } from '../src/index.js';
import { startProducer, stopProducers } from './pyarrow-producer.js';

/**
 * ADR 0033: a crash of a stream that can neither rewind nor resume loses
 * the records it had received and raw had not made durable. This measures
 * it on a real crash: a child process runs the topology over a slow
 * pyarrow producer and is SIGKILLed mid-stream; raw is then read back.
 */

// The driver as `tsc -b` built it (tsconfig.check.json), importing the built packages.
const driver = fileURLToPath(new URL('../dist-test/test/loss-window-driver.js', import.meta.url));
const TOPIC = 'live';
const P0 = { topic: TOPIC, partition: 0 };

interface Report {
  readonly source: { readonly records: number; readonly lossWindowRecords: number | null };
  readonly durableRecords: number;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await stopProducers();
});

/** Runs the driver until `kill(report)` says so, then SIGKILLs it; returns every report it printed. */
async function runUntilKilled(dir: string, port: string, kill: (r: Report) => boolean) {
  const child = spawn(process.execPath, [driver, dir, port, TOPIC], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<unknown>((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (t: string) => stderr.push(t));
  const reports: Report[] = [];
  const changes = new Changes();
  let ended = false;
  void exited.then(() => {
    ended = true;
    changes.poke();
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    reports.push(JSON.parse(line) as Report);
    changes.poke();
  });
  await changes.until(
    () => {
      if (ended) throw new Error(`the driver ended before the moment to kill:\n${stderr.join('')}`);
      const last = reports.at(-1);
      return last !== undefined && kill(last);
    },
    'the driver to have made records durable with more read',
    20_000,
  );
  // Nothing the child prints after this moment is counted: its last report is what we know.
  const known = reports.length;
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return reports.slice(0, known);
}

/** Everything raw durably holds for the stream: its runs, and each record. */
async function rawHolds(dir: string) {
  const sink = await RawSegmentSink.open({
    id: sinkId('raw'),
    dir,
    cluster: 'ipc-stream',
    confirm: { apply: () => Promise.resolve() },
    log: () => undefined,
  });
  try {
    const runs = sink.durableSpans(P0).map((s) => ({ start: s.start, end: s.end }));
    const records: SourceRecord[] = [];
    for (const span of sink.durableSpans(P0))
      for await (const batch of sink.read(span)) records.push(...batch.records);
    return { runs, records };
  } finally {
    await sink.close();
  }
}

const idOf = (r: SourceRecord) =>
  Number((JSON.parse(Buffer.from(r.value).toString('utf8')) as { id: string }).id);

describe('the loss window of a non-resumable IPC stream, measured on a SIGKILL', () => {
  it('raw keeps a prefix of what was received, the loss is within the reported window, and the next stream is numbered on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-ipc-loss-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const raw = join(dir, 'raw');
    // ~1000 rows a second in batches of 10: the stream outlives the run by far.
    const slow = await startProducer([
      '--tcp',
      '0',
      '--rows',
      '1000000',
      '--batch-rows',
      '10',
      '--delay-ms',
      '10',
    ]);
    const reports = await runUntilKilled(
      raw,
      slow.where,
      (r) => r.durableRecords > 0 && r.source.records >= 300,
    );
    const last = reports.at(-1)!;
    // What the pipeline reported is what the ADR says: read and not yet durable.
    for (const r of reports) {
      expect(r.source.lossWindowRecords).toBe(r.source.records - r.durableRecords);
    }

    const first = await rawHolds(raw);
    const d = first.records.length;
    // Raw holds exactly a prefix [0, D) of the stream, each offset the row of that id.
    expect(first.runs).toEqual([{ start: 0, end: d }]);
    expect(first.records.map((r) => r.offset)).toEqual(first.records.map((_, i) => i));
    expect(first.records.map(idOf)).toEqual(first.records.map((_, i) => i));
    // What was reported durable stayed durable: so the rows the child had
    // received by its last report and raw lacks are at most the window that
    // report showed (received-by-report - D <= lossWindowRecords).
    expect(d).toBeGreaterThanOrEqual(last.durableRecords);
    expect(last.source.records - d).toBeLessThanOrEqual(last.source.lossWindowRecords!);
    console.info(
      `loss window at SIGKILL: ${JSON.stringify({
        reports: reports.length,
        lastReport: {
          received: last.source.records,
          durable: last.durableRecords,
          lossWindowRecords: last.source.lossWindowRecords,
        },
        rawDurable: d,
        lostOfLastReport: Math.max(0, last.source.records - d),
        maxReportedWindow: Math.max(...reports.map((r) => r.source.lossWindowRecords ?? 0)),
      })}`,
    );

    // Started again over a NEW stream: its rows are numbered from D, never over raw.
    await stopProducers();
    const next = await startProducer(['--tcp', '0', '--rows', '50', '--batch-rows', '10']);
    const job = await openTopology({
      source: ipcStream({
        connection: { kind: 'tcp', host: '127.0.0.1', port: Number(next.where) },
        topic: TOPIC,
      }),
      raw: rawSegments({ dir: raw }),
      config: { acceptLossWindow: 'records-received-not-yet-durable-in-raw' },
      log: () => undefined,
    });
    const stats = await job.run();
    expect(stats.raw.durableRecords).toBe(50);
    const second = await rawHolds(raw);
    expect(second.runs).toEqual([{ start: 0, end: d + 50 }]);
    // The old rows are untouched; the new stream's row i sits at D + i.
    expect(second.records.slice(0, d).map(idOf)).toEqual(first.records.map(idOf));
    expect(second.records.slice(d).map((r) => r.offset - d)).toEqual(
      second.records.slice(d).map(idOf),
    );
    expect(second.records.slice(d).map(idOf)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});
