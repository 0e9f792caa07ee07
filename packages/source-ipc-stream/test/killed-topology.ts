import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sinkId, type SourceRecord } from '@thalweg/connector-core';
import { RawSegmentSink } from '@thalweg/sink-files';
import { Changes } from '@thalweg/test-services';
import { expect } from 'vitest';

/*
 * A topology over one Arrow IPC stream in a child process of its own
 * (topology-driver.ts), SIGKILLed at a chosen moment, and raw read back
 * afterwards: what the crash tests of this package share.
 */

// The driver as `tsc -b` built it (tsconfig.check.json), importing the built packages.
const driver = fileURLToPath(new URL('../dist-test/test/topology-driver.js', import.meta.url));

/** One line the driver prints: the pipeline's source stats and raw's durable records. */
export interface Report {
  readonly source: { readonly records: number; readonly lossWindowRecords: number | null };
  readonly durableRecords: number;
  /** Positions the pipeline stored (cursors saved, for these store-managed streams). */
  readonly commits: number;
}

export interface KilledRun {
  /** raw's directory. */
  readonly dir: string;
  /** The producer's TCP port. */
  readonly port: string;
  readonly topic: string;
  /** Reads with the resume handshake (otherwise by consent to the loss window). */
  readonly resumable: boolean;
  /** Called with each report; true: SIGKILL the driver now. */
  readonly kill: (report: Report) => boolean;
  /** Where the child's cleanup is registered (the caller runs them after each test). */
  readonly cleanups: (() => Promise<unknown>)[];
}

/** Runs the driver until `kill(report)` says so, then SIGKILLs it; returns every report it printed until then. */
export async function runUntilKilled(run: KilledRun): Promise<Report[]> {
  const args = [driver, run.dir, run.port, run.topic, ...(run.resumable ? ['--resume'] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<unknown>((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
  run.cleanups.push(async () => {
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
      return last !== undefined && run.kill(last);
    },
    'the driver to reach the moment to kill',
    20_000,
  );
  // Nothing the child prints after this moment is counted: its last report is what we know.
  const known = reports.length;
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return reports.slice(0, known);
}

/** Everything raw durably holds for partition 0 of `topic`: its runs, and each record. */
export async function rawHolds(dir: string, topic: string) {
  const sink = await RawSegmentSink.open({
    id: sinkId('raw'),
    dir,
    cluster: 'ipc-stream',
    confirm: { apply: () => Promise.resolve() },
    log: () => undefined,
  });
  const p0 = { topic, partition: 0 };
  try {
    const runs = sink.durableSpans(p0).map((s) => ({ start: s.start, end: s.end }));
    const records: SourceRecord[] = [];
    for (const span of sink.durableSpans(p0))
      for await (const batch of sink.read(span)) records.push(...batch.records);
    return { runs, records };
  } finally {
    await sink.close();
  }
}

/** The generated row's id a record holds. */
export const idOf = (r: SourceRecord): number =>
  Number((JSON.parse(Buffer.from(r.value).toString('utf8')) as { id: string }).id);
