import type { ConfirmTarget, Lane, SinkId } from '@thalweg/connector-core';
import type { StreamWatermarks } from '@thalweg/stream-arrow';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff.js';
import type { BoundedChannel } from './bounded-channel.js';
import { ZerobusSinkError } from './errors.js';
import type { PendingConfirm } from './pending-confirm.js';
import type { StreamMetrics } from './stream-metrics.js';
import type { ZerobusTransport } from './transport.js';

export interface AckLaneDeps<L extends Lane> {
  readonly sink: SinkId;
  readonly transport: ZerobusTransport;
  readonly channel: BoundedChannel<PendingConfirm<L>>;
  readonly watermarks: StreamWatermarks;
  readonly target: ConfirmTarget<L>;
  readonly metrics: StreamMetrics;
  readonly retry: BackoffPolicy & { readonly maxAttempts: number };
  /** Every batch confirmed (or a confirmation target failure), for the stream's bookkeeping. */
  readonly onConfirmed: (pending: PendingConfirm<L>) => void;
  readonly onConfirmFailure: (error: unknown, pending: PendingConfirm<L>) => void;
}

/**
 * The background lane of one stream. It drains the channel in bursts, waits
 * ONCE for the burst's highest offset (acknowledgement is cumulative, so that
 * one wait confirms the whole burst), then applies each confirmation in
 * ascending offset order and advances `delivered`. This is the only place a
 * stream's coverage or source position moves, and only after the durable
 * acknowledgement.
 *
 * `run` resolves when the channel is closed and drained, and rejects with the
 * permanent failure that ended the lane; the batches it had not confirmed stay
 * with the stream for replay.
 */
export async function runAckLane<L extends Lane>(deps: AckLaneDeps<L>): Promise<void> {
  for (;;) {
    const burst = await deps.channel.takeBurst();
    if (burst === null) return;
    // One ordered submit chain per stream: the burst is in ascending offset order.
    const last = burst[burst.length - 1];
    if (last === undefined) continue;
    deps.metrics.coalesce.observe(burst.length);
    await waitDurable(deps, last.offset);
    const confirmedAt = Date.now();
    for (const pending of burst) {
      deps.watermarks.delivered(pending.offset);
      deps.metrics.pending.set(deps.watermarks.pending);
      deps.metrics.deliveryLatencyMs.observe(confirmedAt - pending.submittedAt);
      try {
        await deps.target.apply(pending.confirm, {
          sink: deps.sink,
          span: pending.span,
          durability: 'server-ack',
          records: pending.records,
          bytes: pending.bytes,
          submittedAt: pending.submittedAt,
          confirmedAt,
        });
      } catch (error) {
        // The batch IS durable; only recording it failed. Coverage or the
        // position then lags (a replay later), which is safe; stopping the
        // lane would not make it lead either, so the lane carries on.
        deps.metrics.confirmFailures.inc();
        try {
          deps.onConfirmFailure(error, pending);
        } catch {
          // A throwing observer (a logger) must not end the lane: the count above stands.
        }
      }
      deps.onConfirmed(pending);
    }
  }
}

/** Transient failures are retried on the same stream; anything else ends the lane. */
async function waitDurable<L extends Lane>(deps: AckLaneDeps<L>, offset: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.transport.waitForOffset(offset);
      return;
    } catch (error) {
      const transient = error instanceof ZerobusSinkError && error.failure === 'transient';
      if (!transient || attempt >= deps.retry.maxAttempts) throw error;
      deps.metrics.retries.inc();
      await sleep(backoffDelay(deps.retry, attempt));
    }
  }
}
