import type { HealthReport } from '@thalweg/connector-core';
import type { PartitionLag, PipelineStats, SinkLane } from '@thalweg/pipeline';

/**
 * What telemetry reads from a running topology at each scrape. Both a
 * declared `Topology` and a hand-wired `Pipeline` are one. Reading is
 * cheap: nothing here does I/O, and nothing is counted per record for it.
 */
export interface Observed {
  stats(): PipelineStats;
  health(): HealthReport;
  lanes(): readonly SinkLane[];
  sourceLag(): readonly PartitionLag[];
}
