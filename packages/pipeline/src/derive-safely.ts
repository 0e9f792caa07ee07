import type { SourceBatch } from '@thalweg/connector-core';
import type { Derive, Derived } from './topology.js';

/**
 * A secondary's derivation of one batch, never rejecting: a derivation that
 * throws or rejects refuses the batch whole, each record quarantined as
 * `decode` with the error's message (raw keeps them, and the span is
 * covered by the quarantine, not the sink). The live lane and recovery's
 * replay both derive through it, so a batch meets the same verdict on both.
 */
export async function deriveSafely<B>(derive: Derive<B>, batch: SourceBatch): Promise<Derived<B>> {
  try {
    return await derive(batch);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return {
      batch: null,
      quarantined: batch.records.map((r) => ({ offset: r.offset, reason: 'decode', detail })),
    };
  }
}

/**
 * How many taken batches may be deriving while the one before them is
 * delivered: a derivation on a worker thread then overlaps the submits, and
 * the thread has its next batch when it finishes one. Few, since each holds
 * its batch.
 */
export const DERIVE_AHEAD = 3;
