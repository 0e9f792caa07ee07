import type { HealthReport } from '@thalweg/connector-core';
import type { PartitionLag, PipelineStats, SinkLane } from '@thalweg/pipeline';
import type { Observed } from '@thalweg/telemetry';

/**
 * The demo runs two topologies one after the other (ingest, then the
 * recovery role). Telemetry is served from this view of whichever runs
 * now, so a scraper sees one target throughout; before the first opens,
 * a scrape fails with a 500 that says so.
 */
export class CurrentTopology implements Observed {
  private current: Observed | null = null;

  show(observed: Observed): void {
    this.current = observed;
  }

  stats(): PipelineStats {
    return this.now().stats();
  }

  health(): HealthReport {
    return this.now().health();
  }

  lanes(): readonly SinkLane[] {
    return this.now().lanes();
  }

  sourceLag(): readonly PartitionLag[] {
    return this.now().sourceLag();
  }

  private now(): Observed {
    if (this.current === null) throw new Error('the demo has not opened its topology yet');
    return this.current;
  }
}
