import { DeliveryMetrics, type HealthReport } from '@thalweg/connector-core';
import type { PartitionLag, PipelineStats, SecondaryStats, SinkLane } from '@thalweg/pipeline';
import type { Observed } from '@thalweg/telemetry';

/**
 * A topology as telemetry reads it, built by hand: raw `raw` with one lane
 * and a secondary `pg` with two streams, each lane with its own real
 * DeliveryMetrics the test moves. `reads` counts each method's calls.
 */
export class FakeObserved implements Observed {
  readonly raw = new DeliveryMetrics();
  readonly pg0 = new DeliveryMetrics();
  readonly pg1 = new DeliveryMetrics();
  sourceRecords = 0;
  lagOf0 = 0;
  laneList: SinkLane[] = [
    { sink: 'raw', role: 'primary-raw', stream: '0', metrics: this.raw },
    { sink: 'pg', role: 'secondary', stream: '0', metrics: this.pg0 },
    { sink: 'pg', role: 'secondary', stream: '1', metrics: this.pg1 },
  ];
  readonly reads = { stats: 0, health: 0, lanes: 0, sourceLag: 0 };

  lanes(): readonly SinkLane[] {
    this.reads.lanes += 1;
    return this.laneList;
  }

  health(): HealthReport {
    this.reads.health += 1;
    return {
      live: { ok: true },
      ready: { ok: true },
      detail: {
        backpressure: 'normal',
        stuck: 'ok',
        bottleneck: 'none',
        budgetSaturation: 0.25,
        quarantineShed: 0,
      },
    };
  }

  sourceLag(): readonly PartitionLag[] {
    this.reads.sourceLag += 1;
    return [
      {
        partition: { topic: 'orders', partition: 0 },
        logEnd: 100,
        committed: 100 - this.lagOf0,
        lag: this.lagOf0,
      },
    ];
  }

  stats(): PipelineStats {
    this.reads.stats += 1;
    const pg: SecondaryStats = {
      sink: 'pg',
      state: 'running',
      queuedBatches: 2,
      queuedBytes: 2048,
      submittedBatches: 10,
      deliveredBatches: 8,
      deliveredRecords: 80,
      shedBatches: 1,
      shedRecords: 10,
      alreadyCoveredBatches: 0,
      alreadyCoveredRecords: 0,
      replayingBatches: 0,
      replayingRecords: 0,
      setAsideBatches: 0,
      quarantined: 0,
    };
    return {
      state: 'running',
      elapsedMs: 1000,
      source: {
        batches: 10,
        records: this.sourceRecords,
        bytes: this.sourceRecords * 100,
        // As for a source that can neither rewind nor resume: the gauge has a sample.
        lossWindowRecords: 3,
      },
      raw: {
        sink: 'raw',
        submittedBatches: 10,
        submittedRecords: 100,
        durableBatches: 10,
        durableRecords: 100,
        droppedAcks: 0,
        inflightSpans: 0,
        oversizedPieces: 0,
      },
      positions: { commits: 5, failures: 0, consecutiveFailures: 0, dropped: 0 },
      secondaries: [pg],
      coverage: { recorded: 20, buffered: 0, failures: 0, abandoned: 0 },
      quarantine: {
        byReason: { decode: 3 },
        written: 3,
        writeFailures: 0,
        discarded: 0,
        lane: {
          capacity: 100,
          depth: 0,
          heldBytes: 0,
          offered: 3,
          shed: { decode: 0, contract: 0, dq: 0, 'retry-exhausted': 0, oversized: 0 },
          shedTotal: 0,
        },
      },
      dq: { recorded: 0, buffered: 0, failures: 0, abandoned: 0, bySink: {} },
      dedup: [
        {
          stream: 'orders',
          checked: 100,
          dropped: 4,
          skipped: 2,
          unhashable: 0,
          duplicateRate: 0.04,
        },
      ],
      coordination: { kind: 'quorum', members: 3, reachable: 2 },
      recovery: null,
      flow: {
        state: 'normal',
        batchFactor: 1,
        stuck: 'ok',
        bottleneck: 'none',
        sourcePaused: false,
        budget: {
          budgetBytes: 4096,
          limitBytes: 4096,
          inFlightBytes: 1024,
          waiters: 0,
          waitingBytes: 0,
          saturation: 0.25,
          warmingUp: false,
          acks: 10,
          oversized: 0,
        },
        channelFill: 0.1,
        rawWriteFailures: 0,
        expansionRatio: 1,
      },
    };
  }
}
