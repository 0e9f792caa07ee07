import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { postgresUrl } from '@thalweg/test-services';
import type pg from 'pg';
import type { ChildArgs, ChildRole } from './child-args.js';
import { ChildRun, type ChildExit } from './child-process.js';
import type { CrashArgs } from './crash-args.js';
import { formatCrashAt, type CrashAt } from './crash-point.js';
import type { CrashReport } from './crash-report.js';
import { HarnessError } from './errors.js';
import { auditFinal } from './final-audit.js';
import type { HarnessSource } from './harness-source.js';
import { HarnessTopic } from './harness-topic.js';
import { PulsarTopic } from './pulsar-topic.js';
import { DEFAULT_OFFSET_LAYOUT } from '@thalweg/source-pulsar';
import type { PulsarType } from './child-args.js';
import { harnessPool, PARENT_APPLICATION_NAME, payloadId } from './harness-topology.js';
import { CrashTally, describeProgress } from './crash-tally.js';
import { watchCycle } from './cycle-watch.js';
import { killDeck, planCycle, type KillCause, type KillMode, type KillPlan } from './kill-plan.js';
import { InvariantCheck } from './invariant-check.js';
import { dropChildConnections } from './pg-drops.js';
import { SeededRandom } from './seeded-random.js';

export interface CrashRunOptions extends CrashArgs {
  /** dist/child.js. */
  readonly childScript: string;
  /** Progress, to stderr. */
  readonly log: (line: string) => void;
}

/** Records produced before the first child; the rest come in bursts, one per cycle. */
const UPFRONT_SHARE = 0.3;
const MAX_FAILURES_IN_A_ROW = 3;
const FINAL_COMMIT_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 30_000;
const RECOVERY_TIMEOUT_MS = 180_000;

/** Runs the whole harness: kill cycles, the final ingest and recovery, the audit. */
export async function runCrash(options: CrashRunOptions): Promise<CrashReport> {
  return new CrashRun(options).execute();
}

class CrashRun {
  private readonly rand: SeededRandom;
  private readonly started = Date.now();
  private readonly topic: HarnessSource;
  private readonly pulsarType: PulsarType;
  private readonly group: string;
  private readonly sinkSchema: string;
  private readonly coverageSchema: string;
  private readonly pool: pg.Pool;
  private dir = '';
  private live: ChildRun | null = null;
  private readonly children: ChildRun[] = [];
  private readonly tally = new CrashTally();
  private readonly invariants: InvariantCheck;
  private cycles = 0;
  private pgDrops = 0;

  constructor(private readonly options: CrashRunOptions) {
    this.rand = new SeededRandom(options.seed);
    const run = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    this.group = `thalweg-harness-${run}`;
    // A Pulsar run reads with one subscription type, picked by the seed's parity.
    this.pulsarType = options.seed % 2 === 0 ? 'Shared' : 'Failover';
    this.topic =
      options.source === 'pulsar'
        ? new PulsarTopic(
            `persistent://public/default/thalweg-harness-${run}`,
            options.partitions,
            run,
            this.group,
          )
        : new HarnessTopic(`thalweg-harness-${run}`, options.partitions, run, this.group);
    this.sinkSchema = `twg_harness_${run}`;
    this.coverageSchema = `twg_harness_${run}_cov`;
    this.pool = harnessPool(postgresUrl(), PARENT_APPLICATION_NAME, 2, options.log);
    this.invariants = new InvariantCheck({
      topic: this.topic,
      pool: this.pool,
      sinkSchema: this.sinkSchema,
      coverageSchema: this.coverageSchema,
      partitions: options.partitions,
      log: options.log,
    });
  }

  async execute(): Promise<CrashReport> {
    const { log } = this.options;
    this.dir = await mkdtemp(join(tmpdir(), 'thalweg-harness-'));
    log(
      `harness: seed ${this.options.seed}, source ${this.sourceName()}, ${this.options.kills} kills, ${this.options.records} records, ` +
        `${this.options.partitions} partitions; topic ${this.topic.topic}, schemas ${this.sinkSchema} ` +
        `and ${this.coverageSchema}, dir ${this.dir}`,
    );
    try {
      await this.topic.create();
      await this.killPhase();
      await this.finalPhase();
      return await this.report();
    } finally {
      this.live?.kill();
      await this.cleanup();
    }
  }

  private async killPhase(): Promise<void> {
    const { kills, records } = this.options;
    await this.topic.produce(Math.floor(records * UPFRONT_SHARE));
    // Recovery cycles with nothing to replay end without a kill; allow for them.
    const maxCycles = kills * 3;
    const deck = killDeck(this.rand, maxCycles);
    while (this.tally.kills < kills) {
      if (this.cycles >= maxCycles) {
        throw new HarnessError(
          'TWG_HARNESS_CHILD',
          `${maxCycles} cycles ended in only ${this.tally.kills} of ${kills} kills`,
        );
      }
      const mode = this.nextMode(deck);
      // Every ingest cycle gets fresh records, spread over the kills still to come.
      const left = records - this.topic.produced;
      const burst = mode === 'recovery-window' ? 0 : Math.ceil(left / (kills - this.tally.kills));
      await this.cycle(planCycle(this.rand, mode, this.cycles), burst);
      this.cycles += 1;
    }
  }

  /**
   * The deck's next mode, except that a recovery cycle waits for a backlog:
   * with nothing to replay its child ends before any window. It is then
   * swapped with the next ingest cycle (kills make backlogs: shed batches,
   * secondaries killed before they committed).
   */
  private nextMode(deck: KillMode[]): KillMode {
    const at = this.cycles;
    if (deck[at] === 'recovery-window' && this.invariants.backlog === 0) {
      const swap = deck.findIndex((m, i) => i > at && m !== 'recovery-window');
      if (swap > at) {
        const other = deck[swap] ?? 'timed';
        deck[swap] = 'recovery-window';
        deck[at] = other;
      }
    }
    return deck[at] ?? 'timed';
  }

  /** One child, killed at its crash point or by the parent; then the invariants are checked. */
  private async cycle(plan: KillPlan, burst: number): Promise<void> {
    const role: ChildRole = plan.mode === 'recovery-window' ? 'recovery' : 'both';
    const label = `cycle ${this.cycles} ${plan.crashAt === null ? 'timed' : formatCrashAt(plan.crashAt)}`;
    const child = this.spawn(role, plan.crashAt, label, this.rand.int(2, 16));
    let produced = false;
    const producing = sleep(this.rand.int(0, 800))
      .then(() => this.topic.produce(burst))
      .finally(() => {
        produced = true;
      });
    const { cause, ms } = await watchCycle({
      child,
      plan,
      role,
      burstProduced: () => produced,
      dropConnections: async () => {
        this.pgDrops += await dropChildConnections(this.pool);
      },
    });
    const exit = await child.exited;
    await producing;
    this.account(child, exit, cause, plan, ms);
    await this.invariants.check(label, this.dir);
  }

  private account(
    child: ChildRun,
    exit: ChildExit,
    cause: KillCause | null,
    plan: KillPlan,
    ms: number,
  ): void {
    this.children.push(child);
    this.live = null;
    const outcome = this.tally.count(child, exit, cause, plan);
    if (outcome.kind === 'failed') {
      this.options.log(`  ${child.label} log tail:\n    ${child.logTail().join('\n    ')}`);
    }
    this.options.log(`${child.label}: ${outcome.line} after ${ms} ms; ${describeProgress(child)}`);
    // A child that cannot run at all (a broken build, a refused option) would
    // otherwise be retried for every remaining cycle.
    if (this.tally.failuresInARow >= MAX_FAILURES_IN_A_ROW) {
      throw this.childError(child, `was the ${MAX_FAILURES_IN_A_ROW}th child in a row to fail`);
    }
  }

  private async finalPhase(): Promise<void> {
    const { log, records } = this.options;
    if (this.topic.produced < records) await this.topic.produce(records - this.topic.produced);
    const total = this.topic.produced;
    // Pulsar's batches hold a message or two: its lane holds as many records as Kafka's would.
    const finalLane = this.options.source === 'pulsar' ? 64 : 8;
    const ingest = this.spawn('both', null, 'final ingest', finalLane);
    const deadline = Date.now() + FINAL_COMMIT_TIMEOUT_MS;
    for (;;) {
      const committed = (await this.topic.positions()).done;
      // The child must be running, not still loading, before it is asked to stop.
      if (committed >= total && ingest.last !== null) break;
      if (!ingest.alive) throw this.childError(ingest, `died before committing ${total} records`);
      if (Date.now() > deadline) {
        ingest.kill();
        throw new HarnessError(
          'TWG_HARNESS_TIMEOUT',
          `final ingest committed ${committed} of ${total} records in ${FINAL_COMMIT_TIMEOUT_MS} ms`,
        );
      }
      await sleep(250);
    }
    ingest.terminate();
    await this.expectClean(ingest, STOP_TIMEOUT_MS, 'graceful stop');
    log(`final ingest: all ${total} records committed, stopped gracefully`);
    await this.invariants.check('final ingest', this.dir);
    const recovery = this.spawn('recovery', null, 'final recovery', finalLane);
    await this.expectClean(recovery, RECOVERY_TIMEOUT_MS, 'recovery until caught up');
    log(`final recovery: caught up, replayed ${recovery.last?.replayed ?? 0} records`);
  }

  private async expectClean(child: ChildRun, timeoutMs: number, what: string): Promise<void> {
    const exit = await Promise.race([child.exited, sleep(timeoutMs).then(() => null)]);
    this.children.push(child);
    this.live = null;
    if (exit === null) {
      child.kill();
      throw this.childError(child, `did not finish its ${what} within ${timeoutMs} ms`);
    }
    if (exit.code !== 0) {
      throw this.childError(child, `${what} exited with code ${exit.code}, signal ${exit.signal}`);
    }
  }

  private childError(child: ChildRun, what: string): HarnessError {
    return new HarnessError(
      'TWG_HARNESS_CHILD',
      `${child.label} ${what}; its log ends:\n  ${child.logTail().join('\n  ')}`,
    );
  }

  private spawn(
    role: ChildRole,
    crashAt: CrashAt | null,
    label: string,
    laneBatches: number,
  ): ChildRun {
    const args: ChildArgs = {
      role,
      dir: this.dir,
      source: this.options.source,
      pulsarType: this.pulsarType,
      topic: this.topic.topic,
      group: this.group,
      partitions: this.options.partitions,
      sinkSchema: this.sinkSchema,
      coverageSchema: this.coverageSchema,
      batchRecords: this.rand.int(20, 400),
      laneBatches,
      // Recovery windows are spans of offsets: Pulsar's are packed message
      // ids, one entry apart by 2^batchBits, so its window is as many entries.
      windowRecords:
        this.options.source === 'pulsar' ? 200 * 2 ** DEFAULT_OFFSET_LAYOUT.batchBits : 200,
      zerobusPoisonWaits: this.poisonWaits(),
    };
    const forward = this.options.verbose ? this.options.log : null;
    const child = ChildRun.start(this.options.childScript, args, crashAt, label, forward);
    this.live = child;
    return child;
  }

  /**
   * The durable waits at which this child's Zerobus streams die: one or
   * two, the first stream's and its rebuild's, early (a child lives for
   * seconds and sends a handful of batches, its stream coalescing waits).
   */
  private poisonWaits(): number[] {
    return Array.from({ length: this.rand.int(1, 2) }, () => this.rand.int(1, 5));
  }

  private async report(): Promise<CrashReport> {
    const {
      raw,
      rows,
      zerobus,
      rawCoverageHoles: holes,
    } = await this.invariants.check('audit', this.dir);
    const offsets = await this.topic.offsets();
    const producedIds = Array.from({ length: this.topic.produced }, (_, i) =>
      payloadId(i, this.topic.run),
    );
    const audit = auditFinal({ offsets, producedIds, raw, rows, zerobus });
    const pgDuplicates = this.children.reduce((n, c) => n + (c.last?.pg.duplicates ?? 0), 0);
    return {
      harness: 'crash',
      source: this.sourceName(),
      records: this.topic.produced,
      kills: this.tally.kills,
      kill_points: { ...this.tally.killPoints },
      pg_drops: this.pgDrops,
      missing_raw: audit.missingRaw,
      missing_secondary: audit.missingSecondary,
      missing_by_sink: audit.missingBySink,
      zerobus_unknown_ids: audit.zerobusUnknownIds,
      zerobus_read_errors: this.invariants.zerobusErrors.size,
      zerobus_poisons: this.children.reduce((n, c) => n + (c.last?.zerobus.poisons ?? 0), 0),
      zerobus_rows: zerobus.rows,
      overclaimed_ranges: this.invariants.overclaims.size,
      position_leads: this.invariants.positionLeads,
      duplicates_absorbed: audit.rawDuplicates + pgDuplicates,
      recovery_replayed: this.children.reduce((n, c) => n + (c.last?.replayed ?? 0), 0),
      seed: this.options.seed,
      elapsed_s: Math.round((Date.now() - this.started) / 100) / 10,
      duplicate_rows: audit.duplicateRows,
      id_mismatches: audit.idMismatches,
      raw_conflicts: this.invariants.rawErrors.size,
      raw_coverage_holes: holes.reduce((a, b) => a + b, 0),
      raw_coverage_lag_max: this.invariants.rawCoverageLag,
      child_failures: this.tally.childFailures,
      recovery_idle: this.tally.recoveryIdle,
      duplicates: { raw: audit.rawDuplicates, pg: pgDuplicates },
      cycles: this.cycles,
    };
  }

  /** `kafka`, or `pulsar-shared` / `pulsar-failover`. */
  private sourceName(): string {
    return this.options.source === 'pulsar'
      ? `pulsar-${this.pulsarType.toLowerCase()}`
      : this.options.source;
  }

  private async cleanup(): Promise<void> {
    const { log } = this.options;
    if (this.live !== null) await this.live.exited;
    if (this.options.keep) {
      log(
        `harness: kept topic ${this.topic.topic} (group ${this.group}), schemas ${this.sinkSchema} ` +
          `and ${this.coverageSchema}, dir ${this.dir}`,
      );
    } else {
      const steps: [string, () => Promise<unknown>][] = [
        ['dir', () => rm(this.dir, { recursive: true, force: true })],
        [
          'schemas',
          () =>
            this.pool.query(
              `drop schema if exists "${this.sinkSchema}", "${this.coverageSchema}" cascade`,
            ),
        ],
        ['topic', () => this.topic.remove()],
      ];
      for (const [what, step] of steps) {
        await step().catch((error: unknown) => {
          log(`harness: cleanup of the ${what} failed: ${String(error)}`);
        });
      }
    }
    await this.topic.close().catch(() => undefined);
    await this.pool.end();
  }
}
