import type {
  ConfirmTarget,
  Lane,
  ReplayableSink,
  Sink,
  SourceBatch,
} from '@thalweg/connector-core';
import type { CoverageStore, CoverageTier } from '@thalweg/offset-store';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CrashPoint, Tripwire } from './crash-point.js';

/*
 * The kill points are placed by wrapping the parts the pipeline is given,
 * never by patching the pipeline: the harness must test the code users run.
 * Each wrapper delegates everything and calls the tripwire at one boundary.
 */

/** Raw, dying inside the n-th submit once raw has accepted the batch (queued, not durable). */
export function killableRaw(
  raw: ReplayableSink<SourceBatch>,
  wire: Tripwire,
): ReplayableSink<SourceBatch> {
  return {
    descriptor: raw.descriptor,
    cluster: raw.cluster,
    submit: async (batch, span, confirm) => {
      await raw.submit(batch, span, confirm);
      wire.pass('raw-submit');
    },
    flush: () => raw.flush(),
    close: () => raw.close(),
    read: (span, signal) => raw.read(span, signal),
    held: () => raw.held(),
  };
}

/**
 * A confirm target that dies before handing the n-th confirmation on: the
 * sink's durable acknowledgement happened, and nothing the pipeline does
 * after it (position, coverage) did.
 */
export function killableConfirm<L extends Lane>(
  target: ConfirmTarget<L>,
  wire: Tripwire,
  point: Extract<CrashPoint, 'raw-acked' | 'secondary-acked'>,
): ConfirmTarget<L> {
  return {
    apply: async (confirm, receipt) => {
      wire.pass(point);
      await target.apply(confirm, receipt);
    },
    // A set-aside is not a durable acknowledgement: passed on as it is.
    ...(target.setAside === undefined ? {} : { setAside: target.setAside }),
  };
}

/**
 * The write-behind store's durable tier, dying around the n-th merge (the
 * checkpoint's Postgres write): before it, the local tier still holds the
 * entries; after it, both tiers do and the local log was not yet trimmed.
 */
export function killableTier(tier: CoverageTier, wire: Tripwire): CoverageTier {
  return {
    merge: async (deltas) => {
      wire.pass('checkpoint', 'before');
      await tier.merge(deltas);
      wire.pass('checkpoint', 'after');
    },
    covered: (key) => tier.covered(key),
    destinations: () => tier.destinations(),
    saveCursor: (key, cursor) => tier.saveCursor(key, cursor),
    rewindCursor: (key, cursor) => tier.rewindCursor(key, cursor),
    loadCursor: (key) => tier.loadCursor(key),
    knows: (sink) => tier.knows(sink),
    close: () => tier.close(),
  };
}

/** How long the fatal coverage write stalls before the process dies: several pipeline ticks. */
export const COVERAGE_STALL_MS = 600;

/**
 * The pipeline's coverage store, whose n-th `recordDurable` stalls (as a
 * LevelDB write stall or a slow disk would) and dies during the stall,
 * before anything reached the store. The pipeline treats coverage writes as
 * off the ack path and allows them to lag; this point tests that a lagging
 * coverage write is only ever lag.
 */
export function killableCoverage(
  store: CoverageStore,
  wire: Tripwire,
  stallMs = COVERAGE_STALL_MS,
): CoverageStore {
  return {
    recordDurable: async (receipts) => {
      if (wire.armedFor('coverage-write')) await sleep(stallMs);
      wire.pass('coverage-write');
      await store.recordDurable(receipts);
    },
    gaps: (key, from, to) => store.gaps(key, from, to),
    checkpoint: () => store.checkpoint(),
    merge: (deltas) => store.merge(deltas),
    covered: (key) => store.covered(key),
    destinations: () => store.destinations(),
    knows: (sink) => store.knows(sink),
    saveCursor: (key, cursor) => store.saveCursor(key, cursor),
    rewindCursor: (key, cursor) => store.rewindCursor(key, cursor),
    loadCursor: (key) => store.loadCursor(key),
    close: () => store.close(),
  };
}

/**
 * A secondary that dies inside the n-th submit when `recovering` (the
 * process runs the recovery role, so every submit is a replayed window
 * batch): the batch is queued in the sink, perhaps half committed.
 */
export function killableSecondary<B>(
  sink: Sink<'secondary', B>,
  wire: Tripwire,
  recovering: boolean,
): Sink<'secondary', B> {
  return {
    descriptor: sink.descriptor,
    submit: async (batch, span, confirm) => {
      await sink.submit(batch, span, confirm);
      if (recovering) wire.pass('recovery-window');
    },
    flush: () => sink.flush(),
    close: () => sink.close(),
  };
}
