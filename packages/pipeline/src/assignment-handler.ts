import type { AssignmentEvent, Source, SourceThrottle } from '@thalweg/connector-core';
import type { GatingState } from './gating-state.js';
import type { RawHoleGuard } from './raw-hole-guard.js';
import type { LiveReach } from './recovery/live-reach.js';

/**
 * A consumer group moved partitions. A revoked partition's spans still in
 * flight belong to the old assignment: its generation moves on, so their
 * acknowledgements are dropped, and nothing more is committed for it; taken
 * again, it is checked again for a hole in raw, and recovery repairs all of
 * its gaps meanwhile (live-reach.ts). An assigned partition is told the
 * throttle's current wish.
 */
export function handleAssignment(
  event: AssignmentEvent,
  gating: GatingState,
  holes: RawHoleGuard,
  throttle: SourceThrottle,
  source: Source,
  log: (line: string) => void,
  reach: LiveReach,
): void {
  for (const p of event.partitions) {
    if (event.kind === 'revoked') {
      gating.inflight.bump(p);
      gating.tracker.revoke(p);
      gating.committer.forget(p);
      gating.forget(p);
      holes.forget(p);
      // No longer read here: recovery repairs all of its gaps again.
      reach.revokedFrom(p);
    } else {
      gating.know(p);
      reach.assigned(p);
    }
  }
  if (event.kind === 'assigned') {
    // A partition revoked while paused left the known set, so the resume
    // never reached it and the source (kafkajs too) keeps it paused across
    // the reassignment: it would never be read again. State the throttle's
    // current wish for every partition that arrives.
    if (throttle.paused) source.pause(event.partitions);
    else source.resume(event.partitions);
  }
  log(`${event.kind} ${event.partitions.map((p) => `${p.topic}/${p.partition}`).join(', ')}`);
}
