/**
 * One topology process of the crash harness (see README.md). Run by the
 * parent (crash.ts) as `node dist/child.js --role both|recovery ...`, with
 * THALWEG_CRASH_AT naming where it kills itself. Prints one progress line
 * per second on stdout; logs go to stderr. Exits 0 after a graceful stop
 * (SIGTERM) or, in the recovery role, once recovery has caught up.
 */
import { parseChildArgs, type ChildArgs } from './child-args.js';
import { openChildTopology, type ChildTopology } from './child-topology.js';
import { CRASH_AT_ENV, parseCrashAt, sigkill, Tripwire } from './crash-point.js';
import type { ProgressLine } from './progress-line.js';

const started = Date.now();

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function progress(args: ChildArgs, topology: ChildTopology, final: boolean): ProgressLine {
  const { pipeline } = topology;
  const stats = pipeline.stats();
  let committed = 0;
  for (let partition = 0; partition < args.partitions; partition++) {
    committed += pipeline.committed({ topic: args.topic, partition }) ?? 0;
  }
  const pg = topology.sinkStats();
  return {
    child: 'progress',
    role: args.role,
    t: Date.now() - started,
    final,
    state: stats.state,
    read: stats.source.records,
    durable: stats.raw.durableRecords,
    committed,
    backlog: pipeline.backlog().maxLagRecords,
    shed: stats.secondaries.reduce((n, s) => n + s.shedRecords, 0),
    replayed: stats.recovery?.recordsReplayed ?? 0,
    pg: {
      inserted: pg?.inserted ?? 0,
      duplicates: pg?.duplicates ?? 0,
      retries: pg?.retries ?? 0,
    },
    zerobus: topology.zerobusStats(),
  };
}

async function main(): Promise<number> {
  const args = parseChildArgs(process.argv.slice(2));
  const wire = new Tripwire(parseCrashAt(process.env[CRASH_AT_ENV]), sigkill);
  // Installed before opening: a SIGTERM that arrives while the parts open
  // still means a graceful stop, run as soon as there is a pipeline to stop.
  const stop = { requested: false };
  let topology: ChildTopology | null = null;
  process.once('SIGTERM', () => {
    log('thalweg harness child: SIGTERM, stopping gracefully');
    stop.requested = true;
    void topology?.pipeline.stop();
  });
  const opened = await openChildTopology(args, wire, log);
  topology = opened;
  const print = (final: boolean): void => {
    process.stdout.write(`${JSON.stringify(progress(args, opened, final))}\n`);
  };
  const ticker = setInterval(() => {
    print(false);
  }, 1_000);
  // One extra line as soon as the first record is read, so the parent can
  // time kills from the moment work starts rather than from the next tick.
  const firstRead = setInterval(() => {
    if (opened.pipeline.stats().source.records === 0) return;
    clearInterval(firstRead);
    print(false);
  }, 20);
  const running = opened.pipeline.run({ untilCaughtUp: args.role === 'recovery' });
  if (stop.requested) void opened.pipeline.stop();
  let code = 0;
  try {
    await running;
  } catch (error) {
    log(
      `thalweg harness child: the pipeline failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    code = 1;
  }
  clearInterval(ticker);
  clearInterval(firstRead);
  print(true);
  await opened.release();
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(
      `thalweg harness child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    process.exit(2);
  },
);
