import {
  events,
  formatSpan,
  rawAnchor,
  recordCount,
  type ReplayableSink,
  type Source,
  type SourceBatch,
} from '@thalweg/connector-core';
import { admit, grantablePieceBytes, observeExpansion } from './admission.js';
import { anyLarger, batchBytes, recordBytes, splitBatch } from './batch-split.js';
import { PipelineError } from './errors.js';
import { OrderedOffers } from './ordered-offers.js';
import type { ContentDedup } from './dedup/content-dedup.js';
import type { FailureLatch } from './failure-latch.js';
import type { FlowGovernor } from './flow-governor.js';
import type { GatingState } from './gating-state.js';
import type { PipelineConfig } from './pipeline-config.js';
import type { QuarantineRouter } from './quarantine-router.js';
import type { RawHoleGuard } from './raw-hole-guard.js';
import type { LiveReach } from './recovery/live-reach.js';
import type { SecondaryLane } from './secondary-lane.js';
import { publishSubmitted } from './submit-event.js';

export interface IngestDeps {
  readonly source: Source;
  readonly raw: ReplayableSink<SourceBatch>;
  readonly gating: GatingState;
  readonly holes: RawHoleGuard;
  readonly governor: FlowGovernor;
  readonly config: PipelineConfig;
  readonly lanes: readonly SecondaryLane<unknown>[];
  /** Raw's own quarantine: records too large for any secondary. */
  readonly rawQuarantine: QuarantineRouter;
  readonly failure: FailureLatch;
  /** Told of every piece offered to the lanes, and of the end of ingest. */
  readonly reach: LiveReach;
  /** Keeps upstream duplicates from the lanes (never from raw); null when no stream has it on. */
  readonly dedup: ContentDedup | null;
}

/**
 * The ingest loop: reads the source until it ends or the run aborts. Each
 * batch is cut into pieces the batch factor and the budget allow, each piece
 * charged to the byte budget with its estimated expansion (a single record
 * too large for what the budget can grant passes outside it), registered
 * with the tracker and submitted to raw, then offered to every secondary
 * lane (which never waits). A raw refusal fails
 * the run, and so does a partition resuming past a hole in raw
 * (raw-hole-guard.ts); nothing past either is committed.
 */
export async function readSource(deps: IngestDeps): Promise<void> {
  const deduped = new OrderedOffers<SourceBatch>(MAX_PIECES_IN_DEDUP, (error) => {
    deps.failure.fail(error);
  });
  try {
    await readBatches(deps, deduped);
  } finally {
    // The pieces still in dedup are offered first (its timeout bounds the wait).
    await deduped.drained();
    // Nothing more is offered: recovery owns every gap from now on.
    deps.reach.end();
  }
}

/** Pieces whose dedup lookup is out before the loop waits for the oldest: lookups overlap, memory stays bounded. */
const MAX_PIECES_IN_DEDUP = 8;

async function readBatches(deps: IngestDeps, deduped: OrderedOffers<SourceBatch>): Promise<void> {
  const { gating, governor, failure } = deps;
  const signal = failure.signal;
  for await (const batch of deps.source.batches(signal)) {
    if (failure.error !== null) throw failure.error;
    gating.counts.sourceBatches += 1;
    gating.counts.sourceRecords += recordCount(batch);
    // Counted with the records, here: a batch cut short by a revocation or
    // a stop() is still read, all of it.
    const bytes = batchBytes(batch);
    gating.counts.sourceBytes += bytes;
    if (events.batchRead.active) {
      events.batchRead.publish({ span: batch.span, records: recordCount(batch), bytes });
    }
    gating.progress += 1;
    gating.know(batch.span);
    if (deps.holes.pending(batch.span)) {
      // The first batch of a partition taken: where the source resumes is
      // known now, before anything of it reaches raw.
      try {
        await deps.holes.check(batch.span, batch.span.start);
      } catch (error) {
        failure.fail(error);
        throw error;
      }
    }
    // The generation the batch was read in, taken before any wait: a batch
    // held while the source was paused belongs to the assignment it was read
    // in, and registering it after a revocation would commit for a partition
    // this member no longer owns (or refuse the new owner's re-read spans).
    const generation = gating.inflight.generation(batch.span);
    if (governor.throttle.paused) await governor.throttle.whenOpen(signal);
    if (gating.inflight.generation(batch.span) !== generation) {
      gating.counts.droppedAcks += 1;
      continue;
    }
    gating.committer.boundary(batch.span, batch.span.end);
    observeExpansion(governor.expansion, batch);
    for (const piece of pieces(deps, batch)) {
      const admitted = await admit(governor.budget, governor.expansion, piece, signal);
      const cost = admitted.kind === 'budgeted' ? admitted.cost : 0;
      if (gating.inflight.generation(piece.span) !== generation) {
        // Revoked while this batch waited for the budget: the new owner reads
        // it again. Registering it would leave a span that is never acked.
        if (cost > 0) governor.budget.release(cost, 'abandoned');
        gating.counts.droppedAcks += 1;
        break;
      }
      if (admitted.kind === 'oversized') gating.counts.oversizedPieces += 1;
      gating.tracker.register(piece.span);
      gating.inflight.add(piece.span, { cost, generation, records: recordCount(piece) });
      try {
        await deps.raw.submit(piece, piece.span, rawAnchor(piece.span));
      } catch (error) {
        const refused = new PipelineError(
          'TWG_PIPELINE_RAW_FAILED',
          `primary raw refused ${formatSpan(piece.span)} (${error instanceof Error ? error.message : String(error)}); ` +
            'the source position stays behind it',
          error,
        );
        // Recorded here, not only thrown: the run ignores errors thrown after
        // stop() (they are usually the abort itself), and a raw refusal
        // racing with stop() must still reject run().
        failure.fail(refused);
        throw refused;
      }
      gating.counts.rawBatches += 1;
      gating.counts.rawRecords += recordCount(piece);
      publishSubmitted(deps.raw.descriptor.id, 'primary-raw', piece);
      const clean = withoutOversized(deps, piece);
      if (clean !== null && deps.dedup !== null) {
        // The lookup leaves now and the loop goes on to the next piece;
        // pieces are decided and offered in the order raw took them.
        await deduped.offer(deps.dedup.filter(clean), (kept) => {
          offer(deps, piece, kept);
        });
      } else {
        offer(deps, piece, clean ?? piece);
      }
    }
  }
}

/**
 * Offers `kept` (the piece, or what dedup and the oversized cut left of it)
 * to every lane, then moves the reach past the piece: until it is offered the
 * piece is pending in no lane, and a reach past it would hand it to recovery
 * beside the live offer.
 */
function offer(deps: IngestDeps, piece: SourceBatch, kept: SourceBatch): void {
  for (const lane of deps.lanes) lane.offer(kept);
  deps.reach.offered(piece.span, piece.span.end);
}

/**
 * The batch cut to the batch factor's share of the configured sizes, and
 * never larger than what the byte budget can grant now (admission.ts).
 */
function pieces(deps: IngestDeps, batch: SourceBatch): SourceBatch[] {
  const { governor, config } = deps;
  const factor = governor.batchFactor;
  const maxRecords =
    config.granularity === 'record' ? 1 : Math.max(1, Math.floor(config.maxBatchRecords * factor));
  const maxBytes = Math.min(
    Math.max(1, Math.floor(config.maxBatchBytes * factor)),
    grantablePieceBytes(governor.budget, governor.expansion),
  );
  return splitBatch(batch, { maxRecords, maxBytes });
}

/**
 * What of a piece the lanes are offered, null when there are no lanes:
 * records above `maxRecordBytes` never reach a secondary (raw's quarantine
 * counts them). Content dedup then runs once for every lane, after raw
 * accepted the whole piece: raw keeps every record, and a dropped
 * duplicate's offset stays inside the span the lanes cover.
 */
function withoutOversized(deps: IngestDeps, piece: SourceBatch): SourceBatch | null {
  if (deps.lanes.length === 0) return null;
  const limit = deps.config.maxRecordBytes;
  let clean = piece;
  if (anyLarger(piece, limit)) {
    clean = { span: piece.span, records: piece.records.filter((r) => recordBytes(r) <= limit) };
    for (const r of piece.records) {
      if (recordBytes(r) <= limit) continue;
      deps.rawQuarantine.offer(deps.raw.descriptor.id, piece, {
        offset: r.offset,
        reason: 'oversized',
        detail: `${recordBytes(r)} bytes exceed maxRecordBytes ${limit}`,
      });
    }
  }
  return clean;
}
