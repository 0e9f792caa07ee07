import { sinkId, type SourceBatch } from '@thalweg/connector-core';
import { describeSinkContract, describeSourceContract } from '@thalweg/contracts';
import { SoakSecondary } from '../../src/soak-sink.js';
import { SoakSource } from '../../src/soak-source.js';

// The soak's own source and secondary stand in for real ones over twenty
// million records: they are held to the same contracts.

describeSinkContract('SoakSecondary (the soak counting secondary)', {
  lane: 'secondary',
  // It keeps a count, not rows: a replay counts again.
  replay: 'copies-identical',
  open: async (target) => {
    // No stall: the contract's batches go straight to the lane.
    const sink = new SoakSecondary(sinkId('soak-contract'), target, 0, async () => undefined);
    return {
      sink,
      batch: (records, span): SourceBatch => ({
        span,
        records: records.map((r) => ({
          offset: r.offset,
          key: null,
          value: r.bytes,
          timestamp: 0,
          headers: [],
        })),
      }),
      heldCount: async () => sink.confirmedRecords,
    };
  },
});

const PAYLOAD = 8;

describeSourceContract('SoakSource (the soak generated source)', {
  // It generates its own records (one shared payload); the fixture says what it delivers.
  features: {
    partitions: 2,
    keys: false,
    headers: false,
    nullHeaderValues: false,
    tombstones: false,
    cursors: 'any-offset',
    offsets: 'dense',
  },
  seed: async (written) => {
    const partitions = written.length;
    const perPartition = written[0]?.length ?? 0;
    const value = new Uint8Array(PAYLOAD).fill(0x61);
    return {
      logs: Array.from({ length: partitions }, (_, p) => ({
        partition: { topic: 'soak', partition: p },
        records: Array.from({ length: perPartition }, (_, offset) => ({
          offset,
          key: null,
          value,
          headers: [],
        })),
      })),
      open: async () => new SoakSource('soak', partitions, partitions * perPartition, 4, PAYLOAD),
    };
  },
});
