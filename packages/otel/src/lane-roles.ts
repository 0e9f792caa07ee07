import type { Lane } from '@thalweg/connector-core';
import type { Observed } from '@thalweg/telemetry';

/**
 * The role of each sink, by id, as the topology's lanes name it: the
 * `durable` and `confirmed` events carry the sink and its stream but not
 * its role, and the catalog labels every lane metric with all three.
 *
 * The lanes are read again when an event names a sink not seen yet (a sink
 * opens its lanes when the topology starts, after instrumentation), but at
 * most once per collection for a sink that is still unknown: an event of
 * another topology in the same process (the channels are process-wide)
 * must not cost a read of this one's lanes per batch.
 */
export class LaneRoles {
  private roles = new Map<string, Lane>();
  private readonly missed = new Set<string>();

  constructor(private readonly observed: Pick<Observed, 'lanes'>) {}

  /** Takes the lanes a collection read; unknown sinks may be looked up again. */
  refresh(lanes: ReturnType<Observed['lanes']>): void {
    this.take(lanes);
    this.missed.clear();
  }

  /** The sink's role, or undefined for a sink the topology's lanes do not name. */
  of(sink: string): Lane | undefined {
    const known = this.roles.get(sink);
    if (known !== undefined || this.missed.has(sink)) return known;
    this.take(this.observed.lanes());
    const found = this.roles.get(sink);
    if (found === undefined) this.missed.add(sink);
    return found;
  }

  private take(lanes: ReturnType<Observed['lanes']>): void {
    const roles = new Map<string, Lane>();
    for (const lane of lanes) roles.set(lane.sink, lane.role);
    this.roles = roles;
  }
}
