import { describeSourceContract } from '@thalweg/contracts';
import { GeneratedSource } from '../../src/demo/generated-source.js';

// The demo's source, held to the contract every source is.
const TOPIC = 'demo';
const PAYLOAD = 4;

describeSourceContract('GeneratedSource (the demo source)', {
  // It generates its own records from (partition, offset); the fixture says what it delivers.
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
    const recordsPerPartition = written[0]?.length ?? 0;
    const value = (partition: number, offset: number) =>
      Buffer.from(JSON.stringify({ partition, offset, note: 'x'.repeat(PAYLOAD) }), 'utf8');
    return {
      logs: Array.from({ length: partitions }, (_, p) => ({
        partition: { topic: TOPIC, partition: p },
        records: Array.from({ length: recordsPerPartition }, (_, offset) => ({
          offset,
          key: null,
          value: value(p, offset),
          headers: [],
        })),
      })),
      open: async () =>
        new GeneratedSource({
          topic: TOPIC,
          partitions,
          recordsPerPartition,
          batchSize: 4,
          payloadBytes: PAYLOAD,
        }),
    };
  },
});
