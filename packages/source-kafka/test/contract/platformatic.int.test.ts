import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokers, uniqueName } from '@thalweg/test-services';
import { kafkaSource, platformaticConsumer, platformaticSupported } from '../../src/index.js';
import { platformaticConsumerWith } from '../../src/platformatic-port.js';
import type { PlatformaticModule } from '../../src/platformatic-load.js';
import { assignedSource, BatchCollector, KafkaFixture, quiet } from '../helpers.js';
import { describeKafkaContracts } from './kafka-contracts.js';
import { DEFAULT_OUTAGE } from '../../src/outage-bound.js';
import { SelfAdvancingOutage } from '../self-advancing-outage.js';

const INJECTED = 'injected: the connection was reset';

/** Kafka's compression codecs, as a batch's attributes name them. */
const CODECS = { gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

/** The real client module, noting in `used` each codec it decompresses a batch with. */
async function countingCodecs(used: Set<number>): Promise<PlatformaticModule> {
  const real = await import('@platformatic/kafka');
  const codecs = Object.fromEntries(
    Object.entries(real.compressionsAlgorithmsByBitmask).map(([bits, codec]) => [
      bits,
      {
        ...codec,
        decompressSync: (data: Buffer) => {
          used.add(Number(bits));
          return codec.decompressSync(data);
        },
      },
    ]),
  );
  return { ...real, compressionsAlgorithmsByBitmask: codecs } as unknown as PlatformaticModule;
}

/** A connection whose next `failing.left` requests fail, as a reset connection's do. */
function failingSends<T extends object>(connection: T, failing: { left: number }): T {
  return new Proxy(connection, {
    get(target, property) {
      const real: unknown = Reflect.get(target, property, target);
      if (typeof real !== 'function') return real;
      const method = real as (...args: unknown[]) => unknown;
      if (property !== 'send') return method.bind(target);
      return (...args: unknown[]) => {
        if (failing.left <= 0) return method.apply(target, args);
        failing.left -= 1;
        const callback = args[args.length - 1] as (error: Error) => void;
        callback(new Error(INJECTED));
      };
    },
  });
}

/**
 * The real client module, whose first `left` fetches fail (the fetch
 * connections' requests) or whose first `left` offset listings fail.
 */
async function flakyClient(
  failing: { left: number },
  method: 'fetch' | 'listOffsets' = 'fetch',
): Promise<PlatformaticModule> {
  const real = await import('@platformatic/kafka');
  if (method === 'fetch') {
    class FlakyPool extends real.ConnectionPool {
      constructor(...args: ConstructorParameters<typeof real.ConnectionPool>) {
        super(...args);
        const get = this.get.bind(this) as (broker: object) => Promise<object>;
        Object.assign(this, {
          get: async (broker: object) => failingSends(await get(broker), failing),
        });
      }
    }
    return { ...real, ConnectionPool: FlakyPool };
  }
  class Flaky extends real.Consumer {
    constructor(
      options: ConstructorParameters<typeof real.Consumer<Buffer, Buffer, Buffer, Buffer>>[0],
    ) {
      super(options);
      const call = this.listOffsets.bind(this) as (options: unknown) => Promise<unknown>;
      Object.assign(this, {
        listOffsets: (options: unknown) => {
          if (failing.left <= 0) return call(options);
          failing.left -= 1;
          return Promise.reject(new Error(INJECTED));
        },
      });
    }
  }
  return { ...real, Consumer: Flaky } as unknown as PlatformaticModule;
}

/**
 * The real client module whose fetch answers come back damaged: one bit of
 * the records of `partition` flipped in each of the first `damaged.left`
 * answers that carry some (after the fetcher copied them, before it reads
 * them), as a bad NIC or a broker's bad disk would.
 */
async function damagingClient(
  partition: number,
  damaged: { left: number },
): Promise<PlatformaticModule> {
  const real = await import('@platformatic/kafka');
  const createAPI = ((...args: Parameters<typeof real.createAPI>) => {
    const parse = args[3] as (...a: unknown[]) => RawAnswer;
    args[3] = (...a: unknown[]) => {
      const answer = parse(...a);
      for (const p of answer.responses.flatMap((t) => t.partitions)) {
        if (p.partitionIndex !== partition || p.records === null || damaged.left <= 0) continue;
        damaged.left -= 1;
        // The last byte: a bit of the last batch's records (small answers end on a whole batch).
        const at = p.records.length - 1;
        p.records[at] = (p.records[at] as number) ^ 0x10;
      }
      return answer;
    };
    return real.createAPI(...args);
  }) as typeof real.createAPI;
  return { ...real, createAPI };
}

interface RawAnswer {
  readonly responses: readonly {
    readonly partitions: readonly { partitionIndex: number; records: Buffer | null }[];
  }[];
}

// CI runs every test on Node 20 and on Node 24. @platformatic/kafka needs
// Node 22+, so on Node 24 it passes the contract and the tests below, and on
// Node 20 the source refuses it by name: each runtime runs one of the two.
if (platformaticSupported()) {
  describeKafkaContracts('@platformatic/kafka', platformaticConsumer);
  describe('platformaticConsumer against Kafka', () => {
    const fx = new KafkaFixture();
    beforeAll(() => fx.start());
    afterAll(() => fx.stop());

    it.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)(
      'reads record batches compressed with %s, keys and values as sent',
      async (compression) => {
        const topic = await fx.topic(1);
        const { Producer, stringSerializers } = await import('@platformatic/kafka');
        const producer = new Producer({
          clientId: `twg-${compression}`,
          bootstrapBrokers: kafkaBrokers(),
          serializers: stringSerializers,
          compression,
        });
        const sent = Array.from({ length: 40 }, (_, i) => `v${i}-${'x'.repeat(i * 7)}`);
        try {
          await producer.send({
            messages: sent.map((value, i) => ({ topic, partition: 0, key: `k${i}`, value })),
          });
        } finally {
          await producer.close();
        }
        const codecs = new Set<number>();
        const source = assignedSource({
          partitions: [{ topic, partition: 0 }],
          kafka: platformaticConsumerWith(() => countingCodecs(codecs)),
        });
        const c = new BatchCollector(source);
        await c.until((x) => x.records() >= sent.length);
        expect(c.values()).toEqual(sent);
        // The batches came compressed, and were decompressed by the codec they name.
        expect([...codecs]).toEqual([CODECS[compression]]);
        const keys = c.batches.flatMap((b) =>
          b.records.map((r) => Buffer.from(r.key ?? []).toString()),
        );
        expect(keys).toEqual(sent.map((_, i) => `k${i}`));
        await source.close();
      },
    );

    it('fetches again after a failed fetch, losing and repeating nothing', async () => {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 20);
      const failing = { left: 3 };
      const outage = new SelfAdvancingOutage();
      const source = assignedSource({
        partitions: [{ topic, partition: 0 }],
        kafka: platformaticConsumerWith(() => flakyClient(failing), outage),
      });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 20);
      expect(c.values()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
      expect(failing.left).toBe(0);
      expect(outage.waits).toHaveLength(3);
      await source.close();
    });

    it('positions its partitions again when listing their offsets fails', async () => {
      const topic = await fx.topic(2);
      await fx.sendNumbered(topic, 2, 0, 10);
      const failing = { left: 2 };
      const outage = new SelfAdvancingOutage();
      const source = assignedSource({
        partitions: [
          { topic, partition: 0 },
          { topic, partition: 1 },
        ],
        kafka: platformaticConsumerWith(() => flakyClient(failing, 'listOffsets'), outage),
      });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 10);
      expect(c.values().sort()).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`).sort());
      expect(failing.left).toBe(0);
      expect(outage.waits).toHaveLength(2);
      await source.close();
    });

    it('fetches a damaged partition again while the others go on, and logs the damage', async () => {
      const topic = await fx.topic(2);
      await fx.sendNumbered(topic, 2, 0, 20);
      const damaged = { left: 2 };
      const outage = new SelfAdvancingOutage();
      const lines: string[] = [];
      const source = assignedSource({
        partitions: [
          { topic, partition: 0 },
          { topic, partition: 1 },
        ],
        kafka: platformaticConsumerWith(() => damagingClient(0, damaged), outage),
        log: (line) => lines.push(line),
      });
      const c = new BatchCollector(source);
      await c.until((x) => x.records() >= 20);
      expect(c.values().sort()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`).sort());
      expect(damaged.left).toBe(0);
      expect(outage.waits.length).toBeGreaterThanOrEqual(2);
      const crc = lines.filter((l) => l.includes('fails its CRC-32C check'));
      expect(crc).toHaveLength(2);
      expect(crc[0]).toMatch(
        new RegExp(
          `${topic}/0 record batch at offset \\d+ fails its CRC-32C check: it says 0x[0-9a-f]{8}, its bytes give 0x[0-9a-f]{8}; fetching it again`,
        ),
      );
      await source.close();
    });

    /**
     * A one-partition source over `client`, whose fault never clears: it
     * delivers nothing and ends once the fault has lasted the outage bound,
     * with the message `failure` gives for the topic. The outage, for more.
     */
    async function endsAfterOutage(
      client: () => Promise<PlatformaticModule>,
      failure: (topic: string) => string | RegExp,
    ): Promise<SelfAdvancingOutage> {
      const topic = await fx.topic(1);
      await fx.sendNumbered(topic, 1, 0, 5);
      const outage = new SelfAdvancingOutage();
      const source = assignedSource({
        partitions: [{ topic, partition: 0 }],
        kafka: platformaticConsumerWith(client, outage),
      });
      const c = new BatchCollector(source);
      await expect(c.until(() => false, 20_000)).rejects.toThrow(failure(topic));
      expect(c.batches).toEqual([]);
      expect(outage.time).toBeGreaterThanOrEqual(DEFAULT_OUTAGE.giveUpAfterMs);
      await source.close();
      return outage;
    }

    it('ends the source after a minute of damaged fetches, naming the batch', async () => {
      await endsAfterOutage(
        () => damagingClient(0, { left: Infinity }),
        (topic) =>
          new RegExp(
            `TWG_KAFKA_CONSUMER_FAILED: the Kafka consumer failed and will not restart: ${topic}/0 record batch at offset \\d+ fails its CRC-32C check`,
          ),
      );
    });

    it('rides out a minute of failed fetches, then ends the source naming the cause', async () => {
      const outage = await endsAfterOutage(
        () => flakyClient({ left: Infinity }),
        () =>
          'TWG_KAFKA_CONSUMER_FAILED: the Kafka consumer failed and will not restart: ' + INJECTED,
      );
      // Fetched again after each backoff until the failures had lasted a minute.
      expect(outage.waits.length).toBeGreaterThan(12);
    });
  });
} else {
  describe('@platformatic/kafka on Node 20', () => {
    it('is refused when the source starts, naming the runtime and what to use', async () => {
      const source = kafkaSource({
        mode: 'group',
        brokers: kafkaBrokers(),
        cluster: 'test-cluster',
        topics: ['twg-any'],
        groupId: uniqueName('twg-node20'),
        kafka: platformaticConsumer,
        log: quiet,
      });
      const read = async () => {
        for await (const _ of source.batches(new AbortController().signal)) return;
      };
      await expect(read()).rejects.toThrow(
        /TWG_KAFKA_CLIENT_UNSUPPORTED.*Node 22\.22\+ or 24\.6\+ and this is Node 20\./,
      );
      await source.close();
    });
  });
}
