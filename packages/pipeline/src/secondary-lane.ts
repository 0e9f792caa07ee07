import {
  derivedCoverage,
  isDurable,
  recordCount,
  formatSpan,
  setAsideOf,
  SubmitQueue,
  type ConfirmTarget,
  type LaneMetrics,
  type OffsetSpan,
  type Receipt,
  type SetAside,
  type Sink,
  type SourceBatch,
  type SourcePartition,
} from '@thalweg/connector-core';
import type { DurableReceipt } from '@thalweg/offset-store';
import { clipBatch, recordsIn, submittedPart } from './batch-clip.js';
import { detachBatch } from './batch-detach.js';
import { DERIVE_AHEAD, deriveSafely } from './derive-safely.js';
import type { LaneState, SecondaryStats } from './secondary-stats.js';
import { batchBytes } from './batch-split.js';
import type { CoverageRecorder } from './coverage-recorder.js';
import { CoveredSpans } from './covered-spans.js';
import { resolveLaneSettings, type SecondaryConfig } from './pipeline-config.js';
import { PendingSpans } from './secondary-pending.js';
import { publishSubmitted } from './submit-event.js';
import { emptyReceipt } from './vacuous-receipt.js';
import { withDeadline } from './with-deadline.js';
import type { Derive, Derived, QuarantineNote } from './topology.js';

interface Queued {
  readonly batch: SourceBatch;
  readonly bytes: number;
}

/** A batch taken from the queue whose derivation has started. */
interface Started<B> {
  readonly item: Queued;
  readonly derived: Promise<Derived<B>>;
}

/** Reports a quarantined record of a secondary; returns nothing, never waits. */
export type QuarantineSink = (sink: string, batch: SourceBatch, note: QuarantineNote) => void;

/**
 * One secondary's own lane: a bounded queue (the delivery layer's, by
 * batches and bytes), a pump that derives and submits batches to the sink,
 * and the confirm target that records coverage after the sink's durable
 * acknowledgement (the sink's own ack lane applies it).
 *
 * The lane never pushes back on raw. `offer` is synchronous; when the queue
 * is full, or the sink has failed, the batch is shed and stays a coverage
 * gap that recovery replays from raw. The sink's own backpressure (a waiting
 * `submit`) holds only this lane's pump.
 *
 * A batch the sink refuses alone (a submit rejected with scope `batch`) or
 * sets aside on its ack lane is quarantined record by record, and the lane
 * goes on with the next batch (ADR 0025): a poison batch is held vacuously,
 * as a derivation that refuses every record is; a batch whose retries ran
 * out stays a gap for recovery. Only a sink that failed ends the lane.
 */
export class SecondaryLane<B> {
  private config: SecondaryConfig = resolveLaneSettings();
  private queue = queueOf(this.config);
  private state: LaneState = { kind: 'running' };
  private pump: Promise<void> | null = null;
  private sink: Sink<'secondary', B> | null = null;
  private stopping = false;
  private submitted = 0;
  private delivered = 0;
  private deliveredRecords = 0;
  private shed = 0;
  private shedRecords = 0;
  private alreadyCovered = 0;
  private alreadyCoveredRecords = 0;
  private replaying = 0;
  private replayingRecords = 0;
  private setAsideBatches = 0;
  private quarantined = 0;
  private readonly pending = new PendingSpans();
  /**
   * Batches taken from the queue whose derivations started, in queue order:
   * one that answers later (on a worker thread) overlaps the submits before it.
   */
  private readonly ahead: Started<B>[] = [];

  private sinkName: string;

  constructor(
    label: string,
    private readonly derive: Derive<B>,
    private readonly recorder: CoverageRecorder,
    private readonly quarantine: QuarantineSink,
    private readonly log: (line: string) => void,
    /** What the sink durably holds already: a live batch all inside it is not offered. */
    private readonly covered: CoveredSpans = new CoveredSpans(),
  ) {
    this.sinkName = label;
  }

  /** The sink's ack lanes, for telemetry (none before it opened, or when it reports none). */
  lanes(): readonly LaneMetrics[] {
    return this.sink?.lanes?.() ?? [];
  }

  /** The sink's id once opened (the spec's position before). */
  get id(): string {
    return this.sinkName;
  }

  /** The target the sink is opened with: coverage only after a durable receipt. */
  readonly target: ConfirmTarget<'secondary'> = {
    apply: async (confirm, receipt) => {
      if (confirm.kind !== 'derived-coverage') return;
      this.pending.settleThrough(confirm.span);
      this.delivered += 1;
      this.deliveredRecords += receipt.records;
      // A non-durable secondary (explicit opt-out) never records coverage:
      // there is no durable acknowledgement to record it after.
      if (isDurableReceipt(receipt)) this.recorder.add(receipt);
    },
    setAside: async (confirm, span, refusal) => {
      if (confirm.kind !== 'derived-coverage') return;
      this.setAside(this.pending.settleThrough(span), span, refusal);
    },
  };

  /** Starts the pump once the sink is open; its settings are looked up by the sink's id. */
  start(sink: Sink<'secondary', B>, config: SecondaryConfig): void {
    this.config = config;
    // Anything offered before the sink opened moves to the queue of its settings.
    const early = this.queue.drain();
    this.queue = queueOf(config);
    for (const item of early) {
      if (this.queue.offer(item)) continue;
      this.shedItem(item);
      this.pending.settle(item.batch.span);
    }
    this.sink = sink;
    this.sinkName = sink.descriptor.id;
    this.pump = this.run(sink);
  }

  get current(): LaneState {
    return this.state;
  }

  /**
   * Hands a batch raw accepted to this lane; sheds it when the lane cannot
   * take it. Only what the sink does not durably hold and recovery is not
   * replaying into it now is offered (ADR 0028, ADR 0030): a batch covered
   * in part is cut to the rest.
   */
  offer(batch: SourceBatch): void {
    const parts = this.covered.split(batch.span);
    if (parts.missing.length === 0 && parts.claimed.length === 0) {
      // Written durably before (ahead of a crash, or by recovery just now).
      this.alreadyCovered += 1;
      this.alreadyCoveredRecords += recordCount(batch);
      return;
    }
    if (this.state.kind !== 'running' || this.stopping) {
      this.shedItem({ batch, bytes: 0 });
      return;
    }
    if (parts.missing.length === 0) {
      // Recovery is writing the rest into the sink now: not twice.
      this.replaying += 1;
      this.replayingRecords += recordCount(batch);
      return;
    }
    if (parts.covered.length > 0 || parts.claimed.length > 0) {
      this.alreadyCoveredRecords += recordsIn(batch, parts.covered);
      this.replayingRecords += recordsIn(batch, parts.claimed);
    }
    for (const range of parts.missing) {
      const piece = clipBatch(batch, range);
      if (piece !== null) this.enqueue(piece);
    }
  }

  private enqueue(piece: SourceBatch): void {
    const bytes = batchBytes(piece);
    // A batch that waits behind another holds the bytes it names, not the
    // source's read buffers they are views of (batch-detach.ts). The one the
    // pump takes next goes as it is: a lane that keeps up copies nothing,
    // and nothing is copied for a batch the full queue would shed.
    const waits = this.queue.size.items > 0;
    const batch = waits && this.queue.admits(bytes) ? detachBatch(piece) : piece;
    const item = { batch, bytes };
    if (!this.queue.offer(item)) {
      this.shedItem(item);
      return;
    }
    this.pending.hold(batch.span);
  }

  /** Queue fill, 0..1, for diagnostics (it never throttles the source). */
  fill(): number {
    return this.queue.fill();
  }

  /**
   * Drains the queue into the sink and flushes it, within `deadlineMs`; what
   * is not confirmed by then stays a gap. Then closes the sink.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    this.queue.end();
    const sink = this.sink;
    const drained = (async () => {
      await this.pump;
      if (sink !== null && this.state.kind === 'running') await sink.flush();
    })();
    const finished = await withDeadline(drained, deadlineMs);
    if (!finished) {
      this.log(`secondary ${this.id}: not drained within ${deadlineMs} ms; the rest stays a gap`);
    }
    this.dropQueued();
    if (sink !== null) {
      const closed = await withDeadline(sink.close(), finished ? deadlineMs : 0);
      if (!closed) this.log(`secondary ${this.id}: close did not finish; abandoned`);
    }
    if (this.state.kind === 'running') this.state = { kind: 'closed' };
  }

  stats(): SecondaryStats {
    return {
      sink: this.id,
      state: this.state.kind,
      queuedBatches: this.queue.size.items,
      queuedBytes: this.queue.size.bytes,
      submittedBatches: this.submitted,
      deliveredBatches: this.delivered,
      deliveredRecords: this.deliveredRecords,
      shedBatches: this.shed,
      shedRecords: this.shedRecords,
      alreadyCoveredBatches: this.alreadyCovered,
      alreadyCoveredRecords: this.alreadyCoveredRecords,
      replayingBatches: this.replaying,
      replayingRecords: this.replayingRecords,
      setAsideBatches: this.setAsideBatches,
      quarantined: this.quarantined,
    };
  }

  private async run(sink: Sink<'secondary', B>): Promise<void> {
    const ahead = this.ahead;
    for (;;) {
      if (ahead.length === 0) {
        const item = (await this.queue.take(1))?.[0];
        if (item === undefined) return; // stopped and drained
        ahead.push(this.begin(item));
      }
      const head = ahead.shift();
      if (head === undefined) continue;
      // Counted by the queue's bounds until its turn to be delivered, as
      // when it waited in the queue: deriving ahead holds no more than that.
      this.queue.release(1, head.item.bytes);
      for (const item of this.queue.takeReady(DERIVE_AHEAD - ahead.length)) {
        ahead.push(this.begin(item));
      }
      const { batch } = head.item;
      try {
        // One at a time: the sink's own submit is its backpressure on this pump.
        await this.submitDerived(sink, batch, await head.derived);
      } catch (error) {
        // The sink refused this batch alone and takes the next: not the end.
        const refusal = setAsideOf(error);
        if (refusal !== null) {
          this.setAside(this.pending.refused(batch.span), batch.span, refusal);
          continue;
        }
        this.state = { kind: 'failed', error };
        this.log(
          `secondary ${this.id} failed at ${formatSpan(batch.span)}; ` +
            `its later batches stay gaps for recovery: ${message(error)}`,
        );
        this.shed += 1;
        this.shedRecords += recordCount(batch);
        this.pending.clear();
        this.dropQueued();
        this.queue.end();
        return;
      }
    }
  }

  /** Starts deriving a taken batch (see `deriveSafely`: it never rejects). */
  private begin(item: Queued): Started<B> {
    return { item, derived: deriveSafely(this.derive, item.batch) };
  }

  private async submitDerived(
    sink: Sink<'secondary', B>,
    batch: SourceBatch,
    derived: Derived<B>,
  ): Promise<void> {
    for (const note of derived.quarantined) {
      this.quarantined += 1;
      this.quarantine(this.id, batch, note);
    }
    if (derived.batch === null) {
      // Nothing of the span is left to write: it is held vacuously.
      this.holdVacuously(batch.span);
      this.pending.settle(batch.span);
      return;
    }
    const part = submittedPart(batch, derived.quarantined);
    this.pending.submitting(part);
    await sink.submit(derived.batch, batch.span, derivedCoverage(sink.descriptor.id, batch.span));
    // After acceptance: a refused batch is counted as set aside or shed, never as submitted too.
    this.submitted += 1;
    publishSubmitted(sink.descriptor.id, 'secondary', part);
  }

  /**
   * A batch the sink refused or set aside: its records go to quarantine,
   * `contract` for a poison batch (held vacuously: a replay would meet the
   * same refusal, forever) and `retry-exhausted` for one the sink gave up
   * on (a gap: recovery replays it once the sink is healthy). `batch` is
   * null for a span the lane did not submit (recovery's replay through the
   * same sink): there is nothing to quarantine here (raw holds the
   * records), but a poison span is still held vacuously, or recovery would
   * meet the same refusal on every pass.
   */
  private setAside(batch: SourceBatch | null, span: OffsetSpan, refusal: SetAside): void {
    this.setAsideBatches += 1;
    const reason = refusal.reason === 'poison' ? 'contract' : 'retry-exhausted';
    const detail = `${this.id} refused the batch: ${message(refusal.error)}`;
    this.log(`secondary ${this.id} set aside ${formatSpan(span)} (${refusal.reason}): ${detail}`);
    if (batch !== null) {
      for (const r of batch.records) {
        this.quarantined += 1;
        this.quarantine(this.id, batch, { offset: r.offset, reason, detail });
      }
    }
    if (refusal.reason === 'poison') this.holdVacuously(span);
  }

  /** Nothing of the span is left for the sink: the quarantine holds it, so does coverage. */
  private holdVacuously(span: OffsetSpan): void {
    const sink = this.sink;
    if (sink === null) return;
    const kind = sink.descriptor.durability;
    if (isDurable(kind)) this.recorder.add(emptyReceipt(sink.descriptor.id, span, kind.kind));
  }

  /** Sheds what waits in the queue and what was deriving ahead: gaps for recovery. */
  private dropQueued(): void {
    for (const started of this.ahead.splice(0)) {
      this.queue.release(1, started.item.bytes);
      this.shedItem(started.item);
      this.pending.settle(started.item.batch.span);
    }
    for (const item of this.queue.drain()) {
      this.shedItem(item);
      this.pending.settle(item.batch.span);
    }
  }

  private shedItem(item: Queued): void {
    this.shed += 1;
    this.shedRecords += recordCount(item.batch);
  }

  /**
   * The lowest offset of `partition` this lane may still deliver on its own
   * (queued, or submitted and unconfirmed), or null when nothing is pending.
   * Recovery leaves offsets from there on to the live lane, so a batch in
   * flight is not replayed beside it.
   */
  pendingFloor(partition: SourcePartition): number | null {
    if (this.state.kind !== 'running') return null;
    return this.pending.floor(partition);
  }
}

function queueOf(config: SecondaryConfig): SubmitQueue<Queued> {
  return new SubmitQueue<Queued>({
    maxItems: config.maxQueuedBatches,
    maxBytes: config.maxQueuedBytes,
    // A batch taken to derive ahead counts until its turn comes (run()).
    countUntil: 'released',
  });
}

function isDurableReceipt(receipt: Receipt): receipt is DurableReceipt {
  return receipt.durability !== 'none' && isDurable({ kind: receipt.durability });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
