import {
  describeSourceContract,
  readToEnd,
  type ExpectedRecord,
  type SourceContractFactory,
  type WrittenRecord,
} from '@thalweg/contracts';
import type { Source } from '@thalweg/connector-core';
import {
  PUBLISH_TIME_HEADER,
  pulsarReaderSource,
  pulsarSubscriptionSource,
} from '../../src/index.js';
import { FakePulsarBroker } from '../support/fake-pulsar-port.js';

const TOPIC = 'persistent://contract/ns/records';
const text = (b: Uint8Array | null): string => Buffer.from(b ?? new Uint8Array(0)).toString('utf8');

/**
 * The records in ledger 0, entry 0, one batch index each: with the default
 * layout their offsets are the batch indexes, 0, 1, 2 … as the contract
 * writes them. Properties carry the headers (as text); the source adds
 * the publish time after them.
 */
function seeded(written: readonly (readonly WrittenRecord[])[]) {
  const broker = new FakePulsarBroker().topic(TOPIC, written.length);
  const logs = written.map((records, partition) => {
    const expected: ExpectedRecord[] = records.map((r, i) => {
      const publishTime = 1_000_000 + i;
      broker.publish(`${TOPIC}-partition-${String(partition)}`, {
        ledger: 0,
        entry: 0,
        batchIndex: i,
        payload: r.value,
        key: r.key === null ? null : text(r.key),
        properties: r.headers.map(([n, v]) => [n, text(v)] as const),
        publishTime,
      });
      return {
        offset: i,
        key: r.key,
        value: r.value,
        headers: [
          ...r.headers,
          [PUBLISH_TIME_HEADER, new TextEncoder().encode(String(publishTime))],
        ],
      };
    });
    return { partition: { topic: TOPIC, partition }, records: expected };
  });
  return { broker, logs };
}

const FEATURES = {
  partitions: 2,
  keys: true,
  headers: true,
  nullHeaderValues: false,
  tombstones: false,
  cursors: 'batch-boundaries',
  offsets: 'dense',
} as const;

/** The first partition's first message has an id the layout cannot hold. */
async function outOfRange(open: (broker: FakePulsarBroker) => Promise<Source>) {
  const broker = new FakePulsarBroker().topic(TOPIC, 1);
  broker.publish(`${TOPIC}-partition-0`, { ledger: 2 ** 40 });
  const source = await open(broker);
  return {
    run: () => readToEnd(source),
    names: [TOPIC, 'partition 0', 'ledger'],
  };
}

/**
 * Small batches, so a cursor falls inside the log; a prefetch of 4
 * messages per partition, so a second member of the Shared subscription
 * gets what a first one (aborted, still open) does not hold.
 */
const common = {
  cluster: 'contract',
  topics: [TOPIC],
  type: 'Shared',
  maxBatchMessages: 4,
  maxQueuedBatches: 2,
  log: () => undefined,
} as const;

const readerCommon = {
  cluster: common.cluster,
  topics: common.topics,
  maxBatchMessages: common.maxBatchMessages,
  maxQueuedBatches: common.maxQueuedBatches,
  log: common.log,
};

const subscription: SourceContractFactory = {
  features: FEATURES,
  timeoutMs: 10_000,
  seed: (written) => {
    const { broker, logs } = seeded(written);
    return Promise.resolve({
      logs,
      open: () =>
        Promise.resolve(
          pulsarSubscriptionSource({ ...common, port: broker.port(), subscription: 'contract' }),
        ),
    });
  },
  badInput: () =>
    outOfRange((broker) =>
      Promise.resolve(
        pulsarSubscriptionSource({ ...common, port: broker.port(), subscription: 'contract' }),
      ),
    ),
};

const reader: SourceContractFactory = {
  features: FEATURES,
  timeoutMs: 10_000,
  seed: (written) => {
    const { broker, logs } = seeded(written);
    return Promise.resolve({
      logs,
      open: () => pulsarReaderSource({ ...readerCommon, port: broker.port() }),
    });
  },
  badInput: () =>
    outOfRange((broker) => pulsarReaderSource({ ...readerCommon, port: broker.port() })),
};

describeSourceContract('PulsarSubscriptionSource over the fake port', subscription);
describeSourceContract('PulsarReaderSource over the fake port', reader);
