import type { Consumer, ClusterMetadata } from '@platformatic/kafka';
import { partitionKey, type SourcePartition } from '@thalweg/connector-core';
import type { ConsumerSettings, FetchedBatch, FetchedColumns } from './consumer-port.js';
import { BatchChecksumMismatch } from './kafka-record-batches.js';
import { fetchedBatch, type WirePartition } from './platformatic-records.js';
import { positionLost } from './errors.js';
import type { RawFetcher, RawFetchPartition } from './platformatic-raw-fetch.js';

/** ListOffsets timestamps: the log start and the log end. */
const EARLIEST = -2n;
const LATEST = -1n;
/** Kafka's error code for a fetch position outside the log. */
const OFFSET_OUT_OF_RANGE = 1;

/** A partition this member reads, and where. */
export interface Owned {
  readonly partition: SourcePartition;
  readonly key: string;
  /** The next offset to fetch; null until the join's positions are known. */
  position: bigint | null;
  /** Bumped by a seek or a pause: a fetch answered for an older version is dropped. */
  version: number;
}

/** A partition as a fetch asked for it. */
export interface Asked {
  readonly owned: Owned;
  readonly position: bigint;
  readonly version: number;
}

/** What a fetch round needs of the port that runs it. */
export interface FetchScope {
  readonly client: Consumer;
  /** Sends the fetches; the client's own `fetch` is not used (platformatic-raw-fetch.ts). */
  readonly fetcher: RawFetcher;
  readonly settings: ConsumerSettings;
  readonly topics: readonly string[];
  /** Whether the answer to `asked` may still be delivered (same join, no seek or pause since). */
  current(asked: Asked): boolean;
  /** Hands on a partition's answer; the position has already moved past it. */
  deliver(batch: FetchedBatch): void;
}

/**
 * Where each partition of a join starts when nothing was sought: its
 * committed offset in group mode, else the log's start (`fromBeginning`) or
 * end. Keyed by `partitionKey`.
 */
export async function startingPositions(
  client: Consumer,
  partitions: readonly SourcePartition[],
  group: boolean,
  fromBeginning: boolean,
): Promise<Map<string, bigint>> {
  const starts = new Map<string, bigint>();
  if (partitions.length === 0) return starts;
  const topics = [...new Set(partitions.map((p) => p.topic))];
  const committed = group
    ? await client.listCommittedOffsets({
        topics: topics.map((topic) => ({
          topic,
          partitions: partitions.filter((p) => p.topic === topic).map((p) => p.partition),
        })),
      })
    : new Map<string, bigint[]>();
  const ends = await client.listOffsets({ topics, timestamp: fromBeginning ? EARLIEST : LATEST });
  for (const p of partitions) {
    const done = committed.get(p.topic)?.[p.partition];
    const fallback = ends.get(p.topic)?.[p.partition];
    const start = done !== undefined && done >= 0n ? done : fallback;
    if (start !== undefined) starts.set(partitionKey(p), start);
  }
  return starts;
}

/** One fetch per leader, all at once; each partition's answer is delivered as it is read. */
export async function fetchRound(scope: FetchScope, round: readonly Owned[]): Promise<void> {
  const metadata = await scope.client.metadata({ topics: [...scope.topics] });
  const byNode = new Map<number, Owned[]>();
  for (const o of round) {
    const leader = metadata.topics.get(o.partition.topic)?.partitions[o.partition.partition]
      ?.leader;
    if (leader === undefined || leader < 0) throw new Error(`no leader known for ${o.key}`);
    const list = byNode.get(leader);
    if (list === undefined) byNode.set(leader, [o]);
    else list.push(o);
  }
  await Promise.all([...byNode].map(([node, owned]) => fetchFrom(scope, metadata, node, owned)));
}

async function fetchFrom(
  scope: FetchScope,
  metadata: ClusterMetadata,
  node: number,
  owned: readonly Owned[],
): Promise<void> {
  const { client, settings } = scope;
  const broker = metadata.brokers.get(node);
  if (broker === undefined) throw new Error(`no address known for broker ${node}`);
  const asked = new Map<string, Asked>(
    owned.map((o) => [o.key, { owned: o, position: o.position as bigint, version: o.version }]),
  );
  const topics = new Map<string, RawFetchPartition[]>();
  for (const a of asked.values()) {
    const { topic, partition } = a.owned.partition;
    const list = topics.get(topic) ?? [];
    topics.set(topic, list);
    list.push({
      partition,
      fetchOffset: a.position,
      partitionMaxBytes: settings.maxBytesPerPartition,
    });
  }
  const response = await scope.fetcher.fetch(broker, {
    maxWaitMs: settings.maxWaitTimeInMs,
    minBytes: settings.minBytes,
    maxBytes: settings.maxBytes,
    topics,
  });
  if (response.errorCode !== 0) {
    throw new Error(`the fetch from broker ${node} answered error code ${response.errorCode}`);
  }
  let retry: Error | null = null;
  for (const t of response.responses) {
    for (const part of t.partitions) {
      const a = asked.get(partitionKey({ topic: t.topic, partition: part.partitionIndex }));
      const wanted = a !== undefined && scope.current(a);
      // Records not decoded here go back to the fetcher's pool now.
      if (!wanted || part.errorCode !== 0) part.release();
      if (!wanted) continue;
      if (part.errorCode === OFFSET_OUT_OF_RANGE) {
        throw positionLost(a.owned.partition, a.position, await bounds(client, a.owned.partition));
      }
      if (part.errorCode !== 0) {
        // The round fails and the next one asks the cluster for leaders again.
        retry ??= new Error(`${a.owned.key}: the fetch answered error code ${part.errorCode}`);
        continue;
      }
      const batch = readOrDamaged(t.topic, a.position, part, scope);
      if (batch instanceof BatchChecksumMismatch) {
        // As a partition's error code: the others go on, this one is fetched again.
        retry ??= batch;
        continue;
      }
      if (batch === null) continue;
      a.owned.position = BigInt(batch.lastOffset) + 1n;
      scope.deliver(batch);
    }
  }
  if (retry !== null) throw retry;
}

/**
 * A partition's answer read into its batch, or the damage that stopped it:
 * its bytes go back to the pool and the damage is logged, for the round to
 * fetch the partition again (every other error is the round's).
 */
function readOrDamaged(
  topic: string,
  position: bigint,
  part: WirePartition,
  scope: FetchScope,
): FetchedColumns | null | BatchChecksumMismatch {
  try {
    return fetchedBatch(topic, position, part, scope.fetcher.decompress);
  } catch (error) {
    if (!(error instanceof BatchChecksumMismatch)) throw error;
    part.release();
    scope.settings.log(`thalweg source-kafka: ${error.message}; fetching it again`);
    return error;
  }
}

/** A partition's log start and end, asked of the broker (a failed fetch reports neither). */
async function bounds(
  client: Consumer,
  p: SourcePartition,
): Promise<{ logStartOffset: bigint; highWatermark: bigint }> {
  const ask = async (timestamp: bigint) => {
    try {
      const listed = await client.listOffsets({
        topics: [p.topic],
        partitions: { [p.topic]: [p.partition] },
        timestamp,
      });
      return listed.get(p.topic)?.[p.partition] ?? -1n;
    } catch {
      return -1n;
    }
  };
  return { logStartOffset: await ask(EARLIEST), highWatermark: await ask(LATEST) };
}
