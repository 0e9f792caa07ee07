import {
  derivedCoverage,
  setAsideOf,
  type OffsetSpan,
  type ReplayableSink,
  type Sink,
  type SourceBatch,
} from '@thalweg/connector-core';
import { clipBatch } from '../batch-clip.js';
import { recordBytes } from '../batch-split.js';
import { deriveSafely } from '../derive-safely.js';
import type { Derive, QuarantineNote } from '../topology.js';
import type { RecoveryWindow } from './recovery-window.js';

/** One secondary as recovery drives it: the same sink and derivation as the live lane. */
export interface ReplayTarget<B> {
  readonly sink: Sink<'secondary', B>;
  readonly derive: Derive<B>;
}

/**
 * What to do with records the derivation refuses during a replay:
 * `rehydrate` (default) sends them to quarantine again, so the quarantine
 * holds them even if the first attempt never reached it; `skip-dlq` replays
 * clean data only and reports that the window's quarantine view is
 * incomplete.
 */
export type QuarantineMode = 'rehydrate' | 'skip-dlq';

export interface ReplayOptions {
  readonly signal: AbortSignal;
  /** Stop after this long; what was replayed is covered, the rest stays a gap. */
  readonly maxMs: number;
  readonly quarantineMode: QuarantineMode;
  /** Records above this never reach a secondary, as on the live path (`oversized`). */
  readonly maxRecordBytes: number;
  readonly quarantine: (sink: string, batch: SourceBatch, note: QuarantineNote) => void;
  /** Records a span the derivation left nothing of (held vacuously). */
  readonly recordEmpty: (span: OffsetSpan) => void;
  /** Keeps the window's lease; false once it was lost (another worker has it). */
  readonly keepLease: () => Promise<boolean>;
  readonly now: () => number;
  /** Content dedup, as on the live path (ADR 0036): applied after the oversized cut. */
  readonly dedup?: (batch: SourceBatch) => Promise<SourceBatch>;
}

export type ReplayOutcome =
  | {
      readonly kind: 'done';
      readonly records: number;
      readonly quarantineSkipped: number;
      /**
       * Offsets of the window's gaps raw did not give back: a raw whose reads
       * trail its acknowledgements (`visibleWithinMs`) does not show them yet.
       * The window is then not done, whatever the sink confirmed.
       */
      readonly unread: number;
    }
  | {
      readonly kind: 'timed-out' | 'lease-lost' | 'aborted';
      readonly records: number;
      readonly quarantineSkipped: number;
    };

/**
 * Replays one window from raw into a lagging secondary through the same
 * derivation and sink code as the live path. Coverage is recorded by the
 * sink's confirm target after its durable acknowledgement, exactly as live;
 * this function only waits for those acknowledgements (`flush`) before it
 * reports the window done. Each batch read from raw is clipped to the gap it
 * was asked for, so a coverage claim can never reach past what was replayed.
 */
export async function replayWindow<B>(
  raw: ReplayableSink<SourceBatch>,
  window: RecoveryWindow,
  target: ReplayTarget<B>,
  options: ReplayOptions,
): Promise<ReplayOutcome> {
  const started = options.now();
  let records = 0;
  let quarantineSkipped = 0;
  const stopped = async (): Promise<Exclude<ReplayOutcome['kind'], 'done'> | null> => {
    if (options.signal.aborted) return 'aborted';
    if (options.now() - started > options.maxMs) return 'timed-out';
    if (!(await options.keepLease())) return 'lease-lost';
    return null;
  };
  let unread = 0;
  for (const gap of window.gaps) {
    // where raw's batches, in offset order, have reached inside the gap
    let reach = gap.start;
    const want: OffsetSpan = {
      topic: window.topic,
      partition: window.partition,
      start: gap.start,
      end: gap.end,
    };
    for await (const read of raw.read(want, options.signal)) {
      const batch = clipBatch(read, want);
      if (batch === null) continue;
      if (batch.span.start > reach) unread += batch.span.start - reach;
      reach = Math.max(reach, batch.span.end);
      // The live path hands records over maxRecordBytes to quarantine, never
      // to a secondary: a replay must write the rows the live lane would have
      // written, and a record the secondary cannot take must not poison the
      // window (or fail the sink the live lane shares).
      const limit = options.maxRecordBytes;
      let clean = batch;
      if (batch.records.some((r) => recordBytes(r) > limit)) {
        clean = { span: batch.span, records: batch.records.filter((r) => recordBytes(r) <= limit) };
        for (const r of batch.records) {
          if (recordBytes(r) <= limit) continue;
          if (options.quarantineMode === 'skip-dlq') quarantineSkipped += 1;
          else {
            options.quarantine(raw.descriptor.id, batch, {
              offset: r.offset,
              reason: 'oversized',
              detail: `${recordBytes(r)} bytes exceed maxRecordBytes ${limit}`,
            });
          }
        }
      }
      if (options.dedup !== undefined) clean = await options.dedup(clean);
      const derived = await deriveSafely(target.derive, clean);
      for (const note of derived.quarantined) {
        if (options.quarantineMode === 'rehydrate') options.quarantine(window.sink, batch, note);
        else quarantineSkipped += 1;
      }
      if (derived.batch === null) options.recordEmpty(batch.span);
      else {
        const submitted = target.sink
          .submit(derived.batch, batch.span, derivedCoverage(target.sink.descriptor.id, batch.span))
          .catch((error: unknown) => {
            // The sink refused this batch alone (ADR 0025): quarantined as on
            // the live lane, and a poison span held vacuously, so recovery
            // does not meet the same refusal on every pass.
            const refusal = setAsideOf(error);
            if (refusal === null) throw error;
            const reason = refusal.reason === 'poison' ? 'contract' : 'retry-exhausted';
            const detail = `${window.sink} refused the batch: ${refusal.error.message}`;
            const noted = new Set(derived.quarantined.map((n) => n.offset));
            for (const r of clean.records) {
              if (noted.has(r.offset)) continue;
              if (options.quarantineMode === 'skip-dlq') quarantineSkipped += 1;
              else options.quarantine(window.sink, batch, { offset: r.offset, reason, detail });
            }
            if (refusal.reason === 'poison') options.recordEmpty(batch.span);
          });
        if (!(await unlessAborted(submitted, options.signal))) {
          return { kind: 'aborted', records, quarantineSkipped };
        }
      }
      records += batch.records.length;
      const why = await stopped();
      if (why !== null) {
        if (!(await unlessAborted(target.sink.flush(), options.signal))) {
          return { kind: 'aborted', records, quarantineSkipped };
        }
        return { kind: why, records, quarantineSkipped };
      }
    }
    if (reach < gap.end) unread += gap.end - reach;
  }
  if (!(await unlessAborted(target.sink.flush(), options.signal))) {
    return { kind: 'aborted', records, quarantineSkipped };
  }
  return { kind: 'done', records, quarantineSkipped, unread };
}

/**
 * Waits for `work` unless `signal` aborts first (then false): a sink whose
 * submit or flush never returns must not hang stop(). Nothing is claimed for
 * it here; an acknowledgement that still arrives records coverage through
 * the sink's confirm target, as any other.
 */
function unlessAborted(work: Promise<void>, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const aborted = (): void => {
      resolve(false);
    };
    if (signal.aborted) aborted();
    else signal.addEventListener('abort', aborted, { once: true });
    work.then(
      () => {
        signal.removeEventListener('abort', aborted);
        resolve(true);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', aborted);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
