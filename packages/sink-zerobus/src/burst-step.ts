import {
  setAsideOf,
  type BurstContext,
  type DurableSettlement,
  type Lane,
  type SetAside,
  type Settlement,
} from '@thalweg/connector-core';
import { ZerobusSinkError } from './errors.js';
import type { PendingConfirm } from './pending-confirm.js';

/** How one batch of a burst left the transport: the offset it was given, or why it was refused. */
export type Sent = { readonly offset: number } | { readonly refused: SetAside };

/** What the burst step does on one stream: send (retried, classified), wait (retried). */
export interface BurstIo<L extends Lane> {
  /** Hands the batch to the transport; resolves with its offset once queued there. */
  send(entry: PendingConfirm<L>): Promise<number>;
  /** Cumulative: resolves once every offset <= `offset` is durable. */
  wait(offset: number): Promise<void>;
  /**
   * Whether a batch the transport refuses (poison, or retries exhausted) may be settled
   * aside (a secondary's target has the hook); otherwise the refusal ends
   * the lane (raw keeps every record, ADR 0025).
   */
  readonly canSetAside: boolean;
  /** The most batches one burst grows to before its wait is placed. */
  readonly maxBurst: number;
}

/**
 * The durable step of a Zerobus stream's ack lane: sends the burst's
 * batches in order, takes in what was queued on the lane meanwhile and
 * sends that too (the wait has not started, so nothing stalls behind the
 * binding's lock), then places ONE wait on the last offset sent, and settles
 * each batch only if that wait covered it. Submits that arrive while the
 * wait holds the stream stay queued on the lane and make the next burst:
 * the binding's lock is never asked to take a submit while it is held.
 */
export async function sendThenWait<L extends Lane>(
  burst: readonly PendingConfirm<L>[],
  ctx: BurstContext<number, PendingConfirm<L>>,
  io: BurstIo<L>,
): Promise<void> {
  const entries = [...burst];
  const sent: Sent[] = [];
  for (;;) {
    for (let i = sent.length; i < entries.length; i++) {
      sent.push(await sendOne(entries[i] as PendingConfirm<L>, io));
    }
    if (entries.length >= io.maxBurst) break;
    const more = ctx.more();
    if (more.length === 0) break;
    entries.push(...more);
  }
  const upTo = lastOffset(sent);
  if (upTo !== null) await io.wait(upTo);
  await ctx.settle(settlementsCoveredBy(entries, sent, upTo ?? -1, Date.now()));
}

/** The largest offset sent, null when every batch was refused (nothing to wait on). */
export function lastOffset(sent: readonly Sent[]): number | null {
  let last: number | null = null;
  for (const s of sent)
    if ('offset' in s) last = last === null ? s.offset : Math.max(last, s.offset);
  return last;
}

/**
 * The settlements a completed wait on `waitedUpTo` allows: a sent batch is
 * durable only if its offset is at or below it (acknowledgement is
 * cumulative, nothing else is known); a refused one is set aside in its
 * place. A sent batch above the wait would be confirmed without being
 * durable (loss on a crash): that is refused loudly as a defect, and the
 * lane ends with nothing of the burst confirmed.
 */
export function settlementsCoveredBy<L extends Lane>(
  entries: readonly PendingConfirm<L>[],
  sent: readonly Sent[],
  waitedUpTo: number,
  at: number,
): Settlement<PendingConfirm<L>>[] {
  if (sent.length !== entries.length) {
    throw new ZerobusSinkError(
      'poison-stream',
      `a burst of ${entries.length} batches settled with ${sent.length} sent`,
    );
  }
  return entries.map((entry, i) => {
    const s = sent[i] as Sent;
    if ('refused' in s) {
      // Only a secondary's target has the hook (canSetAside), so this is a secondary's entry.
      return { entry, kind: 'set-aside', refusal: s.refused } as Settlement<PendingConfirm<L>>;
    }
    if (!(s.offset <= waitedUpTo)) {
      throw new ZerobusSinkError(
        'poison-stream',
        `offset ${s.offset} (batch ${entry.seq}) is not covered by the wait on offset ${waitedUpTo}: it would be confirmed before it is durable`,
      );
    }
    const durable: DurableSettlement<PendingConfirm<L>> = { entry, at };
    // Durable is a settlement of either lane (Settlement is conditional on the generic lane).
    return durable as Settlement<PendingConfirm<L>>;
  });
}

async function sendOne<L extends Lane>(entry: PendingConfirm<L>, io: BurstIo<L>): Promise<Sent> {
  try {
    return { offset: await io.send(entry) };
  } catch (error) {
    // A refusal of this batch alone (poison, or retries exhausted): scope `batch`.
    const refusal = io.canSetAside ? setAsideOf(error) : null;
    if (refusal === null) throw error;
    return { refused: refusal };
  }
}
