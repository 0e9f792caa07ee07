import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { afterEach, describe, expect, it } from 'vitest';
import { ipcStream } from '../src/index.js';
import { idOf, rawHolds, runUntilKilled } from './killed-topology.js';
import { startProducer, stopProducers } from './pyarrow-producer.js';

/**
 * ADR 0033: a crash of a stream that can neither rewind nor resume loses
 * the records it had received and raw had not made durable. This measures
 * it on a real crash: a child process runs the topology over a slow
 * pyarrow producer and is SIGKILLed mid-stream; raw is then read back.
 */

const TOPIC = 'live';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await stopProducers();
});

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
    const reports = await runUntilKilled({
      dir: raw,
      port: slow.where,
      topic: TOPIC,
      resumable: false,
      kill: (r) => r.durableRecords > 0 && r.source.records >= 300,
      cleanups,
    });
    const last = reports.at(-1)!;
    // What the pipeline reported is what the ADR says: read and not yet durable.
    for (const r of reports) {
      expect(r.source.lossWindowRecords).toBe(r.source.records - r.durableRecords);
    }

    const first = await rawHolds(raw, TOPIC);
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
    const second = await rawHolds(raw, TOPIC);
    expect(second.runs).toEqual([{ start: 0, end: d + 50 }]);
    // The old rows are untouched; the new stream's row i sits at D + i.
    expect(second.records.slice(0, d).map(idOf)).toEqual(first.records.map(idOf));
    expect(second.records.slice(d).map((r) => r.offset - d)).toEqual(
      second.records.slice(d).map(idOf),
    );
    expect(second.records.slice(d).map(idOf)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});
