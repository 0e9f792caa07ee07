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
 * ADR 0033 and 0043: a stream whose producer speaks the resume handshake
 * loses nothing when our process dies. Restarted, the topology asks the
 * producer for the row after what raw holds (its saved cursor lags raw),
 * so what raw had received and not made durable is sent again, and what
 * raw holds is not sent twice. This kills a child running the topology
 * after it saved a position and while rows it received were not yet
 * durable in raw, restarts the topology over the same producer, and reads
 * raw back.
 */

const TOPIC = 'live';
const ROWS = 3000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await stopProducers();
});

describe('a resumable IPC stream when our process is SIGKILLed between receipt and raw durability', () => {
  it('loses nothing: restarted, it resumes after what raw holds, and raw holds every row once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-ipc-crash-resume-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const raw = join(dir, 'raw');
    // ~2000 rows a second in batches of 10, every row retained for a resume.
    const producer = await startProducer([
      '--tcp',
      '0',
      '--rows',
      `${ROWS}`,
      '--batch-rows',
      '10',
      '--delay-ms',
      '5',
      '--resumable',
      '--stream-id',
      'crash-resume',
    ]);
    const reports = await runUntilKilled({
      dir: raw,
      port: producer.where,
      topic: TOPIC,
      resumable: true,
      // A position saved, more read, and some of what was read not durable yet.
      kill: (r) => r.commits > 0 && r.source.records >= 300 && r.source.records > r.durableRecords,
      cleanups,
    });
    const last = reports.at(-1)!;
    expect(last.source.records).toBeGreaterThan(last.durableRecords);
    // A stream that can resume has no loss window.
    expect(last.source.lossWindowRecords).toBeNull();
    const before = await rawHolds(raw, TOPIC);
    expect(before.records.length).toBeGreaterThanOrEqual(last.durableRecords);
    expect(before.records.length).toBeLessThan(ROWS);

    const job = await openTopology({
      source: ipcStream({
        connection: { kind: 'tcp', host: '127.0.0.1', port: Number(producer.where) },
        topic: TOPIC,
        resume: true,
      }),
      raw: rawSegments({ dir: raw }),
      log: () => undefined,
    });
    const stats = await job.run();
    // It resumed after what raw held: the producer sent only the rest.
    expect(stats.source.records).toBe(ROWS - before.records.length);

    const after = await rawHolds(raw, TOPIC);
    expect(after.runs).toEqual([{ start: 0, end: ROWS }]);
    const offsets = [...new Set(after.records.map((r) => r.offset))].sort((a, b) => a - b);
    expect(offsets).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    // One copy of each row, the producer's row for its offset (a second copy
    // would differ in its arrival time: raw would refuse it as a conflict).
    expect(after.records.map((r) => r.offset)).toEqual(offsets);
    expect(after.records.filter((r) => idOf(r) !== r.offset)).toEqual([]);
    console.info(
      `resumed after SIGKILL: ${JSON.stringify({
        receivedAtKill: last.source.records,
        durableAtKill: last.durableRecords,
        rawBeforeRestart: before.records.length,
        readAfterRestart: stats.source.records,
        rawCopies: after.records.length,
      })}`,
    );
  });
});
