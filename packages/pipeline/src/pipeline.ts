import {
  formatSpan,
  monotonicClock,
  PositionTracker,
  rawAnchor,
  type Clock,
  type Confirm,
  type ConfirmTarget,
  type HealthReport,
  type Receipt,
  type ReplayableSink,
  type Sink,
  type Source,
  type SourceBatch,
  type SourcePartition,
  type AssignmentEvent,
} from '@thalweg/connector-core';
import type { CoverageStore, DurableReceipt } from '@thalweg/offset-store';
import { batchBytes, recordBytes, splitBatch } from './batch-split.js';
import { CoverageRecorder } from './coverage-recorder.js';
import { PipelineError } from './errors.js';
import { FlowGovernor } from './flow-governor.js';
import { parsePipelineConfig, secondaryConfig, type PipelineConfig } from './pipeline-config.js';
import type { PipelineState, PipelineStats } from './pipeline-stats.js';
import { PositionCommitter } from './position-committer.js';
import { RawInflight } from './raw-inflight.js';
import { NO_BACKLOG, type RecoveryBacklog } from './recovery/backlog-meter.js';
import type { RecoveryRunner } from './recovery/recovery-runner.js';
import {
  measureFinal,
  openRecovery,
  reconcileRawCoverage,
  runRepair,
  type RecoveryParts,
} from './recovery/recovery-wiring.js';
import { QuarantineRouter } from './quarantine-router.js';
import { SecondaryLane } from './secondary-lane.js';
import type { PipelineSpec, QuarantineWriter } from './topology.js';
import { validateTopology } from './validate-topology.js';

/**
 * A running topology: source -> primary raw -> secondaries.
 *
 * The gating path is source -> raw -> position. A batch read from the source
 * is registered with the position tracker, charged to the byte budget and
 * submitted to raw; raw's ack lane confirms it after the durable write, and
 * only then does the tracker fold it into the committable position, which a
 * background committer stores (broker commit or cursor). Secondaries get
 * the batch after raw accepted it, each through its own lane, and record
 * coverage after their own durable acknowledgement; they never gate raw.
 */
export class Pipeline {
  private readonly tracker = new PositionTracker();
  private readonly inflight = new RawInflight();
  private readonly abort = new AbortController();
  private readonly known = new Map<string, SourcePartition>();
  private readonly quarantine: QuarantineRouter;
  private readonly startedAt: number;
  private raw: ReplayableSink<SourceBatch> | null = null;
  private lanes: SecondaryLane<unknown>[] = [];
  private recovery: RecoveryRunner | null = null;
  private repair: RecoveryParts | null = null;
  private untilCaughtUp = false;
  /** In `both`: the source ended and raw made all of it durable (untilCaughtUp may end recovery). */
  private ingestEnded = false;
  private state: PipelineState = 'opened';
  private failure: Error | null = null;
  private finished: Promise<PipelineStats> | null = null;
  private ticker: NodeJS.Timeout | null = null;
  private progress = 0;
  private counts = {
    sourceBatches: 0,
    sourceRecords: 0,
    sourceBytes: 0,
    rawBatches: 0,
    rawRecords: 0,
    durableBatches: 0,
    durableRecords: 0,
    droppedAcks: 0,
  };

  private constructor(
    private readonly source: Source,
    private readonly sourceName: string,
    private readonly coverage: CoverageStore,
    private readonly config: PipelineConfig,
    private readonly governor: FlowGovernor,
    private readonly recorder: CoverageRecorder,
    private readonly committer: PositionCommitter,
    quarantineWriter: QuarantineWriter | undefined,
    private readonly clock: Clock,
    private readonly memoryUsage: () => number,
    private readonly log: (line: string) => void,
  ) {
    this.startedAt = clock.now();
    this.quarantine = new QuarantineRouter(
      config.flowControl.quarantine,
      quarantineWriter,
      (line) => log(`thalweg pipeline: ${line}`),
    );
  }

  /**
   * Validates the configuration, opens the sinks with the pipeline's confirm
   * targets, checks the topology rules on what was opened, and positions a
   * store-managed source at its stored cursors. Nothing is read yet.
   */
  static async open(spec: PipelineSpec): Promise<Pipeline> {
    const log = spec.log ?? ((line: string) => console.info(line));
    try {
      const pipeline = Pipeline.create(spec, log);
      await pipeline.openParts(spec);
      return pipeline;
    } catch (error) {
      // The pipeline owns the source and the coverage store from this call
      // on. A failed open releases them (and openParts the sinks it opened),
      // so the caller can open them again in this process and retry: a
      // LevelDB store left open would refuse the retry with LEVEL_LOCKED.
      const released = await Promise.allSettled([spec.source.close(), spec.coverage.close()]);
      for (const r of released) {
        if (r.status === 'rejected') {
          log(`thalweg pipeline: releasing after a failed open: ${reason(r.reason)}`);
        }
      }
      throw error;
    }
  }

  private static create(spec: PipelineSpec, log: (line: string) => void): Pipeline {
    const config = parsePipelineConfig(spec.config ?? {});
    const clock = spec.clock ?? monotonicClock;
    const source = spec.source;
    const sourceName = spec.sourceName ?? source.cluster;
    // Bound once the pipeline exists: a fatal coverage refusal stops it.
    let created: Pipeline | null = null;
    const recorder = new CoverageRecorder(
      spec.coverage,
      (line) => log(`thalweg pipeline: ${line}`),
      (error) => created?.fail(error),
    );
    const commit =
      source.regime === 'broker-managed'
        ? (p: SourcePartition, next: number) => source.commit(p, next)
        : (p: SourcePartition, next: number) =>
            spec.coverage.saveCursor(
              { source: sourceName, topic: p.topic, partition: p.partition },
              source.cursorAt(p, next),
            );
    const committer = new PositionCommitter(commit, config.commit.maxConsecutiveFailures, (line) =>
      log(`thalweg pipeline: ${line}`),
    );
    created = new Pipeline(
      source,
      sourceName,
      spec.coverage,
      config,
      new FlowGovernor(config.flowControl, config.memoryLimitBytes, clock),
      recorder,
      committer,
      spec.quarantine,
      clock,
      spec.memoryUsage ?? (() => process.memoryUsage.rss()),
      log,
    );
    return created;
  }

  /**
   * Runs until the source ends or `stop` is called, then shuts down in order.
   * With `untilCaughtUp`, the `recovery` role ends once a pass finds no
   * secondary behind raw, and the `both` role, once the source ended, goes on
   * recovering until then; the `ingest` role refuses it (no recovery runs).
   */
  run(options: { readonly untilCaughtUp?: boolean } = {}): Promise<PipelineStats> {
    if (options.untilCaughtUp === true && this.config.recovery.role === 'ingest') {
      return Promise.reject(
        new PipelineError(
          'TWG_PIPELINE_TOPOLOGY_INVALID',
          "run({ untilCaughtUp: true }): recovery.role is 'ingest', so this process never " +
            "recovers and could never catch up; use role 'both' or 'recovery'",
        ),
      );
    }
    this.untilCaughtUp ||= options.untilCaughtUp === true;
    this.finished ??= this.execute();
    return this.finished;
  }

  /**
   * The recovery backlog, in every role: each durable secondary's lag as
   * `coverageReport` computes it, as last measured (`plannedAt`) — by each
   * recovery pass, every `recovery.scanEveryMs` in the `ingest` role, and
   * once more at shutdown. Zero when nothing is behind.
   */
  backlog(): RecoveryBacklog {
    return this.repair?.meter.current() ?? NO_BACKLOG;
  }

  /**
   * Graceful shutdown: stop reading, flush raw (its acks commit the last
   * positions), commit, drain each secondary within its deadline, record and
   * checkpoint coverage, close everything.
   */
  async stop(): Promise<PipelineStats> {
    this.abort.abort();
    return this.run();
  }

  health(): HealthReport {
    return this.governor.health(this.state === 'running', this.quarantine.laneStats());
  }

  stats(): PipelineStats {
    const c = this.counts;
    return {
      state: this.state,
      elapsedMs: this.clock.now() - this.startedAt,
      source: { batches: c.sourceBatches, records: c.sourceRecords, bytes: c.sourceBytes },
      raw: {
        sink: this.raw?.descriptor.id ?? '',
        submittedBatches: c.rawBatches,
        submittedRecords: c.rawRecords,
        durableBatches: c.durableBatches,
        durableRecords: c.durableRecords,
        droppedAcks: c.droppedAcks,
        inflightSpans: this.inflight.size,
      },
      positions: this.committer.stats(),
      secondaries: this.lanes.map((l) => l.stats()),
      coverage: this.recorder.stats(),
      quarantine: this.quarantine.stats(),
      recovery:
        this.recovery === null ? null : { ...this.recovery.stats(), backlog: this.backlog() },
      flow: {
        ...this.governor.describe(),
        sourcePaused: this.governor.throttle.paused,
        budget: this.governor.budget.stats(),
      },
    };
  }

  /** The committed position of a partition, as far as this pipeline stored it. */
  committed(partition: SourcePartition): number | null {
    return this.committer.committed(partition);
  }

  private async openParts(spec: PipelineSpec): Promise<void> {
    const rawTarget: ConfirmTarget<'primary-raw'> = {
      apply: async (confirm, receipt) => {
        this.onRawDurable(confirm, receipt);
      },
    };
    const lanes = (spec.secondaries ?? []).map(
      (s, i) =>
        new SecondaryLane(
          `secondaries[${i}]`,
          s.derive,
          this.recorder,
          (sink, batch, note) => {
            this.quarantine.offer(sink, batch, note);
          },
          (line) => this.log(`thalweg pipeline: ${line}`),
        ),
    );
    const opened: Sink<'primary-raw' | 'secondary', unknown>[] = [];
    let lanesStarted = false;
    try {
      const raw = await spec.primaryRaw(rawTarget);
      opened.push(raw);
      const sinks: Sink<'secondary', unknown>[] = [];
      for (const [i, s] of (spec.secondaries ?? []).entries()) {
        const lane = lanes[i];
        if (lane === undefined) continue;
        const sink = await s.open(lane.target);
        opened.push(sink);
        sinks.push(sink);
      }
      validateTopology(
        this.source,
        raw,
        sinks.map((s) => s.descriptor),
        this.config,
        this.coverage,
      );
      sinks.forEach((sink, i) =>
        lanes[i]?.start(sink, secondaryConfig(this.config, sink.descriptor.id)),
      );
      lanesStarted = true;
      this.raw = raw;
      this.lanes = lanes;
      await reconcileRawCoverage(raw, this.coverage);
      this.repair = openRecovery({
        spec,
        config: this.config,
        raw,
        sinks,
        lanes,
        coverage: this.coverage,
        recorder: this.recorder,
        quarantine: this.quarantine,
        clock: this.clock,
        log: (line) => this.log(`thalweg recovery: ${line}`),
      });
      this.recovery = this.repair.runner;
      if (this.config.recovery.role !== 'recovery') await this.positionSource();
    } catch (error) {
      // A started lane owns its sink and closes it when stopped (nothing was
      // offered to it yet, so it drains at once).
      const drainMs = this.config.shutdown.secondaryDrainMs;
      const [raw] = opened;
      const releases: Promise<void>[] = lanesStarted
        ? [...(raw === undefined ? [] : [raw.close()]), ...lanes.map((l) => l.stop(drainMs))]
        : opened.map((s) => s.close());
      await Promise.allSettled(releases);
      this.recovery = null;
      throw error;
    }
    this.source.onAssignment?.((event) => {
      this.onAssignment(event);
    });
  }

  /** A store-managed source resumes from its stored cursors; the tracker starts there too. */
  private async positionSource(): Promise<void> {
    const source = this.source;
    if (source.regime !== 'store-managed') return;
    for (const p of source.partitions()) {
      const cursor = await this.coverage.loadCursor({
        source: this.sourceName,
        topic: p.topic,
        partition: p.partition,
      });
      if (cursor === null) continue;
      source.seek(p, cursor);
      this.tracker.resumeAt(p, cursor.nextOffset);
      this.committer.resumeAt(p, cursor.nextOffset);
      this.log(
        `thalweg pipeline: ${p.topic}/${p.partition} resumes at ${cursor.nextOffset} (${cursor.kind} cursor)`,
      );
    }
  }

  private async execute(): Promise<PipelineStats> {
    this.state = 'running';
    this.ticker = setInterval(() => {
      this.tick();
    }, this.config.evaluateEveryMs);
    this.ticker.unref();
    this.quarantine.start();
    const role = this.config.recovery.role;
    const recovering = this.runRecovery();
    if (role !== 'recovery') {
      try {
        await this.readSource();
      } catch (error) {
        if (!this.abort.signal.aborted || this.failure !== null) this.fail(error);
      }
    }
    // Ingest ends with its source; recovery alone runs until stopped (or
    // caught up), and so does `both` asked to catch up, once its source ended
    // and raw made all of it durable (what raw holds is then final).
    if (role === 'both' && this.untilCaughtUp && !this.abort.signal.aborted) {
      await this.flushRaw();
      this.ingestEnded = this.failure === null;
      this.recovery?.wake();
      await recovering;
    }
    if (role === 'recovery') await recovering;
    this.state = 'stopping';
    this.abort.abort();
    await recovering;
    await this.shutdown();
    if (this.failure !== null) {
      this.state = 'failed';
      throw this.failure;
    }
    this.state = 'stopped';
    return this.stats();
  }

  private async runRecovery(): Promise<void> {
    if (this.repair === null) return;
    const role = this.config.recovery.role;
    try {
      await runRepair(
        this.repair,
        this.abort.signal,
        this.config.recovery.scanEveryMs,
        () => this.untilCaughtUp && (role === 'recovery' || this.ingestEnded),
      );
    } catch (error) {
      if (!this.abort.signal.aborted) this.fail(error);
    }
  }

  private async readSource(): Promise<void> {
    const signal = this.abort.signal;
    const raw = this.requireRaw();
    for await (const batch of this.source.batches(signal)) {
      if (this.failure !== null) throw this.failure;
      this.counts.sourceBatches += 1;
      this.counts.sourceRecords += batch.records.length;
      // Counted with the records, here: a batch cut short by a revocation or
      // a stop() is still read, all of it.
      this.counts.sourceBytes += batchBytes(batch);
      this.progress += 1;
      this.known.set(`${batch.span.topic}\u0000${batch.span.partition}`, batch.span);
      // The generation the batch was read in, taken before any wait: a batch
      // held while the source was paused belongs to the assignment it was read
      // in, and registering it after a revocation would commit for a partition
      // this member no longer owns (or refuse the new owner's re-read spans).
      const generation = this.inflight.generation(batch.span);
      if (this.governor.throttle.paused) await this.governor.throttle.whenOpen(signal);
      if (this.inflight.generation(batch.span) !== generation) {
        this.counts.droppedAcks += 1;
        continue;
      }
      this.committer.boundary(batch.span, batch.span.end);
      for (const piece of this.pieces(batch)) {
        const bytes = batchBytes(piece);
        const cost = await this.admit(bytes, signal);
        if (this.inflight.generation(piece.span) !== generation) {
          // Revoked while this batch waited for the budget: the new owner reads
          // it again. Registering it would leave a span that is never acked.
          this.governor.budget.release(cost, 'abandoned');
          this.counts.droppedAcks += 1;
          break;
        }
        this.tracker.register(piece.span);
        this.inflight.add(piece.span, { cost, generation, records: piece.records.length });
        try {
          await raw.submit(piece, piece.span, rawAnchor(piece.span));
        } catch (error) {
          const refused = new PipelineError(
            'TWG_PIPELINE_RAW_FAILED',
            `primary raw refused ${formatSpan(piece.span)}; the source position stays behind it`,
            error,
          );
          // Recorded here, not only thrown: `execute` ignores errors thrown
          // after stop() (they are usually the abort itself), and a raw
          // refusal racing with stop() must still reject run().
          this.fail(refused);
          throw refused;
        }
        this.counts.rawBatches += 1;
        this.counts.rawRecords += piece.records.length;
        this.offerSecondaries(piece);
      }
    }
  }

  private pieces(batch: SourceBatch): SourceBatch[] {
    const factor = this.governor.batchFactor;
    const maxRecords =
      this.config.granularity === 'record'
        ? 1
        : Math.max(1, Math.floor(this.config.maxBatchRecords * factor));
    const maxBytes = Math.max(1, Math.floor(this.config.maxBatchBytes * factor));
    return splitBatch(batch, { maxRecords, maxBytes });
  }

  /** Charges the byte budget; a piece larger than what may be granted takes all of it. */
  private async admit(bytes: number, signal: AbortSignal): Promise<number> {
    const budget = this.governor.budget;
    const cost = Math.max(1, Math.min(bytes, budget.stats().limitBytes));
    const now = budget.tryAcquire(cost);
    if (now.kind === 'granted') return cost;
    const outcome = now.kind === 'wait' ? await budget.acquire(cost, signal) : now;
    if (outcome.kind === 'oversized') {
      // Cannot happen with cost capped at the limit; refuse rather than run unbudgeted.
      throw new PipelineError('TWG_PIPELINE_STATE', `byte budget refused ${cost} bytes`);
    }
    return cost;
  }

  private offerSecondaries(piece: SourceBatch): void {
    if (this.lanes.length === 0) return;
    const limit = this.config.maxRecordBytes;
    let clean = piece;
    if (piece.records.some((r) => recordBytes(r) > limit)) {
      clean = { span: piece.span, records: piece.records.filter((r) => recordBytes(r) <= limit) };
      for (const r of piece.records) {
        if (recordBytes(r) <= limit) continue;
        this.quarantine.offer(this.requireRaw().descriptor.id, piece, {
          offset: r.offset,
          reason: 'oversized',
          detail: `${recordBytes(r)} bytes exceed maxRecordBytes ${limit}`,
        });
      }
    }
    for (const lane of this.lanes) lane.offer(clean);
  }

  private onRawDurable(confirm: Confirm<'primary-raw'>, receipt: Receipt): void {
    if (confirm.kind !== 'raw-anchor') return;
    const span = confirm.span;
    const entry = this.inflight.take(span);
    if (entry === undefined) {
      this.fail(
        new PipelineError(
          'TWG_PIPELINE_STATE',
          `raw acknowledged ${formatSpan(span)}, which was never submitted`,
        ),
      );
      return;
    }
    this.governor.budget.release(entry.cost);
    this.counts.durableBatches += 1;
    this.counts.durableRecords += entry.records;
    this.progress += entry.records;
    if (receipt.durability !== 'none') this.recorder.add(receipt as DurableReceipt);
    if (entry.generation !== this.inflight.generation(span)) {
      // Read before a revocation: this member may no longer commit for it.
      this.counts.droppedAcks += 1;
      return;
    }
    try {
      const next = this.tracker.markDurable(span);
      if (next !== null) this.committer.durable(span, next);
    } catch (error) {
      this.fail(error);
    }
  }

  private onAssignment(event: AssignmentEvent): void {
    for (const p of event.partitions) {
      if (event.kind === 'revoked') {
        this.inflight.bump(p);
        this.tracker.revoke(p);
        this.committer.forget(p);
        this.known.delete(`${p.topic}\u0000${p.partition}`);
      } else {
        this.known.set(`${p.topic}\u0000${p.partition}`, p);
      }
    }
    if (event.kind === 'assigned') {
      // A partition revoked while paused left `known`, so the resume never
      // reached it and the source (kafkajs too) keeps it paused across the
      // reassignment: it would never be read again. State the throttle's
      // current wish for every partition that arrives.
      if (this.governor.throttle.paused) this.source.pause(event.partitions);
      else this.source.resume(event.partitions);
    }
    this.log(
      `thalweg pipeline: ${event.kind} ${event.partitions.map((p) => `${p.topic}/${p.partition}`).join(', ')}`,
    );
  }

  private tick(): void {
    const cycle = this.governor.evaluate({
      memoryBytes: this.memoryUsage(),
      consecutiveWriteFailures: this.committer.stats().consecutiveFailures,
      progress: this.progress,
    });
    if (cycle.backpressure.kind === 'transition') {
      this.log(
        `thalweg pipeline: backpressure ${cycle.backpressure.from} -> ${cycle.backpressure.state.kind} ` +
          `(batch factor ${cycle.backpressure.batchFactor})`,
      );
    }
    if (cycle.pauseChanged) {
      const partitions = [...this.known.values()];
      if (this.governor.throttle.paused) this.source.pause(partitions);
      else this.source.resume(partitions);
    }
    if (cycle.stuck.kind !== 'steady') {
      this.log(
        `thalweg pipeline: stuck detector ${cycle.stuck.from} -> ${cycle.stuck.status.level}`,
      );
      if (cycle.stuck.status.level === 'exit-requested') {
        this.fail(
          new PipelineError('TWG_PIPELINE_STUCK', 'no progress with memory held; stopping'),
        );
      }
    }
    this.committer.commitPending().catch((error: unknown) => {
      this.fail(error);
    });
    void this.recorder.flush();
    this.quarantine.dropUnwritten();
  }

  private async flushRaw(): Promise<void> {
    try {
      await this.requireRaw().flush();
    } catch (error) {
      this.fail(
        new PipelineError('TWG_PIPELINE_RAW_FAILED', 'primary raw failed while flushing', error),
      );
    }
  }

  private async shutdown(): Promise<void> {
    const raw = this.requireRaw();
    await this.flushRaw();
    if (this.ticker !== null) clearInterval(this.ticker);
    try {
      // Positions of everything raw confirmed, failure or not: they are durable.
      await this.committer.drain();
    } catch (error) {
      this.fail(error);
    }
    await Promise.all(this.lanes.map((l) => l.stop(this.config.shutdown.secondaryDrainMs)));
    if (!(await this.recorder.drain())) {
      this.log('thalweg pipeline: some coverage could not be recorded; those spans stay gaps');
    }
    // After the secondaries, which quarantine while they drain; within the
    // drain deadline, since a writer that never answers must not hang shutdown.
    await this.quarantine.stop(this.config.shutdown.secondaryDrainMs);
    if (this.repair !== null) {
      await this.settle('measure the backlog', measureFinal(this.repair, raw, this.coverage));
    }
    await this.settle('checkpoint coverage', this.coverage.checkpoint());
    await this.settle('close raw', raw.close());
    await this.settle('close source', this.source.close());
    await this.settle('close coverage', this.coverage.close());
  }

  private async settle(what: string, work: Promise<void>): Promise<void> {
    try {
      await work;
    } catch (error) {
      this.log(
        `thalweg pipeline: ${what} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private fail(error: unknown): void {
    if (this.failure === null) {
      this.failure =
        error instanceof Error ? error : new PipelineError('TWG_PIPELINE_STATE', String(error));
      this.log(`thalweg pipeline: stopping on failure: ${reason(error)}`);
    }
    this.abort.abort();
  }

  private requireRaw(): ReplayableSink<SourceBatch> {
    if (this.raw === null)
      throw new PipelineError('TWG_PIPELINE_STATE', 'the pipeline is not open');
    return this.raw;
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
