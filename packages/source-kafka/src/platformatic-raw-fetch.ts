import type { Connection, ConnectionPool, Reader } from '@platformatic/kafka';
import { BufferPool } from '@thalweg/connector-core';
import { KafkaSourceError } from './errors.js';
import type { PlatformaticModule } from './platformatic-load.js';
import type { Decompress, WirePartition } from './platformatic-records.js';

/*
 * The adapter's Fetch (v12, Kafka 2.7 and later), sent with the client's
 * own request encoder and connections but read by a parser of our own
 * that leaves each partition's records as the bytes the broker sent:
 * kafka-record-batches.ts decodes them straight into columns. The client's
 * `fetch` decodes every record into objects first (about a third of the
 * ingest thread at full speed), so this adapter does not call it.
 */

/** Fetch's isolation level: only committed transactions (and no transaction). */
const READ_COMMITTED = 1;
/** A fetch outside any fetch session (KIP-227's "final epoch"): every partition is asked each time. */
const NO_SESSION_ID = 0;
const NO_SESSION_EPOCH = -1;

export interface RawFetchPartition {
  readonly partition: number;
  readonly fetchOffset: bigint;
  readonly partitionMaxBytes: number;
}

export interface RawFetchRequest {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly topics: ReadonlyMap<string, readonly RawFetchPartition[]>;
}

export interface RawFetchTopic {
  readonly topic: string;
  readonly partitions: readonly WirePartition[];
}

export interface RawFetchResponse {
  /** The fetch's own error code (0 when the partitions carry theirs). */
  readonly errorCode: number;
  readonly responses: readonly RawFetchTopic[];
}

type FetchCall = (
  connection: Connection,
  maxWaitMs: number,
  minBytes: number,
  maxBytes: number,
  isolationLevel: number,
  sessionId: number,
  sessionEpoch: number,
  topics: object[],
  forgottenTopicsData: object[],
  rackId: string,
) => Promise<RawFetchResponse>;

/**
 * Idle record buffers a fetcher keeps for its next fetches: a fetch's
 * partitions of up to `maxBytesPerPartition` (1 MiB by default) each, a few
 * fetches deep.
 */
const POOLED_BYTES = 16 * 1024 * 1024;

type Parse = (
  correlationId: number,
  apiKey: number,
  apiVersion: number,
  reader: Reader,
) => RawFetchResponse;

/**
 * A partition's records, copied out of the response's socket chunks into a
 * buffer of `pool` (a response of many chunks is not one buffer), with the
 * call that gives the buffer back once they are decoded.
 */
function pooledRecords(
  pool: BufferPool,
  reader: Reader,
  size: number,
): { records: Buffer; release: () => void } {
  const backing = pool.take(size);
  const records = Buffer.from(backing, 0, size);
  let at = 0;
  for (const chunk of reader.buffer.subarray(reader.position, reader.position + size).buffers) {
    at += chunk.copy(records, at);
  }
  let given = false;
  const release = () => {
    if (given) return;
    given = true;
    pool.give(backing);
  };
  return { records, release };
}

/** Fetch v12's response, records left as bytes in `pool`'s buffers (the layout is in the client's fetch-v12). */
const rawFetchParser =
  (pool: BufferPool): Parse =>
  (_correlationId, _apiKey, _apiVersion, reader) => {
    reader.readInt32(); // throttle time
    const errorCode = reader.readInt16();
    reader.readInt32(); // session id
    const responses = reader.readArray((t) => ({
      topic: t.readString(),
      partitions: t.readArray(
        (r) => {
          const partitionIndex = r.readInt32();
          const partitionError = r.readInt16();
          const highWatermark = r.readInt64();
          r.readInt64(); // last stable offset
          r.readInt64(); // log start offset
          const abortedTransactions = r.readNullableArray((a) => ({
            producerId: a.readInt64(),
            firstOffset: a.readInt64(),
          }));
          r.readInt32(); // preferred read replica
          // COMPACT_RECORDS: length + 1, 0 for null.
          const size = r.readUnsignedVarInt() - 1;
          const pooled = size > 0 ? pooledRecords(pool, r, size) : null;
          if (size > 0) r.skip(size);
          r.readTaggedFields();
          return {
            partitionIndex,
            errorCode: partitionError,
            highWatermark,
            abortedTransactions,
            records: pooled?.records ?? null,
            release: pooled?.release ?? NOTHING_TO_RELEASE,
          };
        },
        true,
        false,
      ),
    }));
    reader.readTaggedFields();
    return { errorCode, responses };
  };

const NOTHING_TO_RELEASE = (): void => undefined;

/**
 * Sends fetches on connections of its own (one per broker, apart from the
 * group's), so that a long poll never queues behind a heartbeat or a
 * commit. `close` ends them.
 */
export class RawFetcher {
  readonly #pool: ConnectionPool;
  readonly #call: FetchCall;
  readonly decompress: Decompress;

  constructor(client: PlatformaticModule, clientId: string) {
    this.#pool = new client.ConnectionPool(`${clientId}-fetch`);
    const records = new BufferPool(POOLED_BYTES);
    const api = client.createAPI(1, 12, client.fetchV12.createRequest, rawFetchParser(records));
    this.#call = api.async;
    const codecs = client.compressionsAlgorithmsByBitmask;
    this.decompress = (codec, bytes) => {
      const algorithm = codecs[codec];
      if (algorithm === undefined) {
        throw new KafkaSourceError(
          'TWG_KAFKA_RECORD_INVALID',
          `a record batch says compression codec ${codec}, which Kafka does not define`,
        );
      }
      return algorithm.decompressSync(bytes);
    };
  }

  async fetch(
    broker: { host: string; port: number },
    request: RawFetchRequest,
  ): Promise<RawFetchResponse> {
    const connection = await this.#pool.get(broker);
    const topics = [...request.topics].map(([topic, partitions]) => ({
      topicId: topic,
      partitions: partitions.map((p) => ({
        partition: p.partition,
        currentLeaderEpoch: -1,
        fetchOffset: p.fetchOffset,
        lastFetchedEpoch: -1,
        partitionMaxBytes: p.partitionMaxBytes,
      })),
    }));
    return this.#call(
      connection,
      request.maxWaitMs,
      request.minBytes,
      request.maxBytes,
      READ_COMMITTED,
      NO_SESSION_ID,
      NO_SESSION_EPOCH,
      topics,
      [],
      '',
    );
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
