import { partitionKey, type SourcePartition, type SourceRecord } from '@thalweg/connector-core';
import {
  describeSourceContract,
  type ExpectedLog,
  type SourceFeatures,
  type WrittenRecord,
} from '@thalweg/contracts';
import { MemoryGroupSource, MemoryStoreSource } from '../doubles/memory-sources.js';

// The pipeline's tests read from these doubles; the contract holds them to
// what the real sources deliver.

const FEATURES: SourceFeatures = {
  partitions: 2,
  keys: true,
  headers: true,
  nullHeaderValues: true,
  tombstones: true,
  cursors: 'any-offset',
  offsets: 'dense',
};
const TOPIC = 'memory-contract';
const BATCH = 4;

type Logs = Map<string, { partition: SourcePartition; records: SourceRecord[] }>;

function logsOf(written: readonly (readonly WrittenRecord[])[]): {
  logs: Logs;
  expected: ExpectedLog[];
} {
  const logs: Logs = new Map();
  const expected: ExpectedLog[] = [];
  written.forEach((records, p) => {
    const partition = { topic: TOPIC, partition: p };
    const log = records.map((r, offset) => ({
      ...r,
      offset,
      timestamp: 1_700_000_000_000 + offset,
    }));
    logs.set(partitionKey(partition), { partition, records: log });
    expected.push({ partition, records: log });
  });
  return { logs, expected };
}

describeSourceContract('MemoryStoreSource (pipeline double)', {
  features: FEATURES,
  seed: async (written) => {
    const { logs, expected } = logsOf(written);
    return { logs: expected, open: async () => new MemoryStoreSource(logs, BATCH) };
  },
});

describeSourceContract('MemoryGroupSource (pipeline double)', {
  features: FEATURES,
  seed: async (written) => {
    const { logs, expected } = logsOf(written);
    // The group's committed positions, as a broker keeps them between members.
    const committed = new Map<string, number>();
    let last: MemoryGroupSource | null = null;
    return {
      logs: expected,
      open: async () => {
        for (const c of last?.commits ?? []) committed.set(partitionKey(c.partition), c.next);
        const source = new MemoryGroupSource(logs, BATCH);
        for (const { partition } of logs.values()) {
          const from = committed.get(partitionKey(partition));
          if (from !== undefined) source.assign(partition, from);
        }
        last = source;
        return source;
      },
    };
  },
});
