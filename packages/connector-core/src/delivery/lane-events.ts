import type { SinkId } from '../sink-id.js';
import { events } from '../telemetry/events.js';

/** Tells the `durable` channel about a burst, when anyone listens. */
export function publishDurable(
  sink: SinkId,
  stream: string,
  burst: readonly { readonly submittedAt: number }[],
  durableAt: number,
): void {
  if (!events.durable.active || burst.length === 0) return;
  let firstSubmittedAt = Number.POSITIVE_INFINITY;
  for (const e of burst) firstSubmittedAt = Math.min(firstSubmittedAt, e.submittedAt);
  events.durable.publish({ sink, stream, batches: burst.length, firstSubmittedAt, durableAt });
}
