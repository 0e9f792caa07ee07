import {
  describeSourceContract,
  readToEnd,
  type ExpectedRecord,
  type SourceContractFactory,
  type SourceFeatures,
  type WrittenRecord,
} from '@thalweg/contracts';
import type { Source } from '@thalweg/connector-core';
import { pulsar } from '@thalweg/test-services';
import {
  decodeMessageId,
  DEFAULT_OFFSET_LAYOUT,
  messageOffset,
  PUBLISH_TIME_HEADER,
  pulsarReaderSource,
  pulsarSubscriptionSource,
  webSocketPort,
} from '../../src/index.js';
import { produce } from '../support/ws-producer.js';
import { readBack } from '../support/ws-read-back.js';
import { createTopic, newTopic } from '../ws/admin.js';

const { wsUrl, adminUrl } = pulsar();

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/**
 * The real broker's features: properties are a map, so a header list with a
 * repeated name or a kept order cannot be written (the fake's contract run
 * covers those), and Pulsar has no delete marker.
 */
const FEATURES: SourceFeatures = {
  partitions: 2,
  keys: true,
  headers: false,
  nullHeaderValues: false,
  tombstones: false,
  cursors: 'batch-boundaries',
  offsets: 'sparse',
};

/**
 * A fresh partitioned topic holding `written`, one entry per message (no
 * producer batching). What the source must report is read back from the
 * broker without the source's code: each message's id (its offset, by the
 * default layout) and publish time (the header the source adds).
 */
async function seeded(written: readonly (readonly WrittenRecord[])[]) {
  const topic = newTopic('twg-contract');
  await createTopic(topic, written.length);
  const logs = [];
  for (const [partition, records] of written.entries()) {
    const own = `${topic}-partition-${String(partition)}`;
    await produce(
      wsUrl,
      own,
      records.map((r) => ({ payload: r.value, ...(r.key === null ? {} : { key: text(r.key) }) })),
    );
    const held = await readBack(wsUrl, own, records.length);
    const expected: ExpectedRecord[] = records.map((r, i) => {
      const facts = held[i];
      if (facts === undefined) throw new Error(`${own}: message ${String(i)} was not read back`);
      return {
        offset: messageOffset(decodeMessageId(facts.messageId), DEFAULT_OFFSET_LAYOUT),
        key: r.key,
        value: r.value,
        headers: [[PUBLISH_TIME_HEADER, utf8(String(facts.publishTime))]],
      };
    });
    logs.push({ partition: { topic, partition }, records: expected });
  }
  return { topic, logs };
}

/** Small batches, so a cursor falls inside the log. A source closes its port: each gets its own. */
const common = () => ({
  port: webSocketPort({ wsUrl, adminUrl }),
  cluster: 'contract',
  maxBatchMessages: 4,
  maxQueuedBatches: 2,
  log: () => undefined,
});

/**
 * Entry ids past what one bit holds: three messages on a fresh topic, read
 * with a layout of one entry bit, so the third message's id cannot become an
 * offset and the source must refuse it, naming the partition and the field.
 */
async function outOfRange(open: (topic: string) => Promise<Source>) {
  const topic = newTopic('twg-contract-bad');
  await createTopic(topic, 1);
  await produce(
    wsUrl,
    `${topic}-partition-0`,
    ['a', 'b', 'c'].map((p) => ({ payload: utf8(p) })),
  );
  const source = await open(topic);
  return {
    run: () => readToEnd(source),
    names: [topic, 'partition 0', 'entry id'],
  };
}

const tiny = { entryBits: 1, batchBits: 1 } as const;

const subscription: SourceContractFactory = {
  features: FEATURES,
  timeoutMs: 30_000,
  seed: async (written) => {
    const { topic, logs } = await seeded(written);
    return {
      logs,
      open: () =>
        Promise.resolve(
          pulsarSubscriptionSource({
            ...common(),
            topics: [topic],
            subscription: 'contract',
            type: 'Shared',
          }),
        ),
    };
  },
  badInput: () =>
    outOfRange((topic) =>
      Promise.resolve(
        pulsarSubscriptionSource({
          ...common(),
          topics: [topic],
          subscription: 'contract',
          offsetBits: tiny,
        }),
      ),
    ),
};

const reader: SourceContractFactory = {
  features: FEATURES,
  timeoutMs: 30_000,
  seed: async (written) => {
    const { topic, logs } = await seeded(written);
    return { logs, open: () => pulsarReaderSource({ ...common(), topics: [topic] }) };
  },
  badInput: () =>
    outOfRange((topic) => pulsarReaderSource({ ...common(), topics: [topic], offsetBits: tiny })),
};

describeSourceContract('PulsarSubscriptionSource against the real broker', subscription);
describeSourceContract('PulsarReaderSource against the real broker', reader);
