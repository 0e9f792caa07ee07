import { randomUUID } from 'node:crypto';
import {
  recordJson,
  sinkId,
  type SourcePartition,
  type SourceRecord,
} from '@thalweg/connector-core';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { RawSegmentSink, rawSegments } from '@thalweg/sink-files';
import { postgres } from '@thalweg/sink-postgres';
import { kafka } from '@thalweg/source-kafka';
import { kafkaBrokers, postgresUrl, waitFor as waitUntil } from '@thalweg/test-services';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { openTopology, type PipelineConfigInput } from '../../src/index.js';

export const CLUSTER = 'pipeline-int';
export const RAW = sinkId('raw');
/** The PostgreSQL secondary's id, as declared. */
export const PG_NAME = 'pg-events';
export const PG = sinkId(PG_NAME);
const quiet = (): void => undefined;

/** Records as produced: one unique payload per record, decodable as the Postgres row. */
export function payload(i: number, run: string): string {
  return JSON.stringify({ id: `${run}-${i}`, n: i, pad: PAD });
}

const PAD = 'p'.repeat(400);

export class KafkaTopic {
  readonly kafka = new Kafka({
    clientId: 'thalweg-pipeline-int',
    brokers: kafkaBrokers(),
    logLevel: logLevel.NOTHING,
  });
  readonly admin: Admin = this.kafka.admin();
  readonly producer: Producer = this.kafka.producer();
  readonly run = randomUUID().slice(0, 8);
  produced = 0;

  constructor(
    readonly topic: string,
    readonly partitions: number,
  ) {}

  async create(): Promise<void> {
    await this.admin.connect();
    await this.producer.connect();
    await this.admin.createTopics({
      topics: [{ topic: this.topic, numPartitions: this.partitions, replicationFactor: 1 }],
      waitForLeaders: true,
    });
  }

  /** Produces `n` more records, spread over the partitions. */
  async produce(n: number): Promise<void> {
    const messages = Array.from({ length: n }, (_, k) => {
      const i = this.produced + k;
      return { partition: i % this.partitions, value: payload(i, this.run) };
    });
    for (let at = 0; at < messages.length; at += 500) {
      await this.producer.send({ topic: this.topic, messages: messages.slice(at, at + 500) });
    }
    this.produced += n;
  }

  /** The group's committed next offset per partition (-1 when none). */
  async committed(groupId: string): Promise<number[]> {
    const [entry] = await this.admin.fetchOffsets({ groupId, topics: [this.topic] });
    const out = new Array<number>(this.partitions).fill(-1);
    for (const p of entry?.partitions ?? []) out[p.partition] = Number(p.offset);
    return out;
  }

  /** The log end offset per partition. */
  async ends(): Promise<number[]> {
    const offsets = await this.admin.fetchTopicOffsets(this.topic);
    const out = new Array<number>(this.partitions).fill(0);
    for (const o of offsets) out[o.partition] = Number(o.high);
    return out;
  }

  async close(): Promise<void> {
    await this.producer.disconnect();
    await this.admin.disconnect();
  }
}

/** The Postgres secondary's table: the record's id and number, keyed by the record id. */
export const TABLE = (name: string) =>
  ({
    name,
    columns: [
      { name: 'id', type: 'text', nullable: false },
      { name: 'n', type: 'bigint', nullable: false },
      { name: 'src_partition', type: 'integer', nullable: false },
      { name: 'src_offset', type: 'bigint', nullable: false },
    ],
  }) as const;

/** A record's row in TABLE's column order: deterministic, as recovery maps the same record again. */
export function pgRow(record: SourceRecord, from: SourcePartition): readonly unknown[] {
  const v = recordJson(record) as { id: string; n: number };
  return [v.id, v.n, from.partition, record.offset];
}

export interface MemberDirs {
  readonly raw: string;
  readonly coverage: string;
}

/**
 * One member of the topology: Kafka group source -> raw segments ->
 * Postgres secondary (rows and its coverage in one transaction), with the
 * pipeline's coverage in LevelDB next to raw.
 */
export async function openMember(options: {
  readonly topic: string;
  readonly groupId: string;
  readonly dirs: MemberDirs;
  readonly table: string;
  readonly pgCoverage: PostgresCoverage;
  readonly config?: PipelineConfigInput;
  readonly log?: string[];
}) {
  return openTopology({
    source: kafka({
      brokers: kafkaBrokers(),
      cluster: CLUSTER,
      topics: [options.topic],
      groupId: options.groupId,
      sessionTimeout: 6_000,
      rebalanceTimeout: 6_000,
      heartbeatInterval: 200,
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 16 * 1024,
    }),
    raw: rawSegments({ dir: options.dirs.raw, coverageDir: options.dirs.coverage }),
    secondaries: {
      [PG_NAME]: postgres({
        connectionString: postgresUrl(),
        table: TABLE(options.table),
        coverage: options.pgCoverage,
        row: pgRow,
      }),
    },
    config: options.config ?? {},
    log: (line) => options.log?.push(line),
  });
}

/** Every offset raw (read back from disk, possibly several members' dirs) holds, per partition. */
export async function rawHeld(
  dirs: readonly string[],
  topic: string,
  partitions: number,
): Promise<Set<number>[]> {
  const held = Array.from({ length: partitions }, () => new Set<number>());
  for (const dir of dirs) {
    const raw = await RawSegmentSink.open({
      id: RAW,
      dir,
      cluster: CLUSTER,
      confirm: { apply: async () => undefined },
      log: quiet,
    });
    for (let p = 0; p < partitions; p++) {
      const at: SourcePartition = { topic, partition: p };
      for await (const b of raw.read({ ...at, start: 0, end: Number.MAX_SAFE_INTEGER })) {
        for (const r of b.records) held[p]?.add(r.offset);
      }
    }
    await raw.close();
  }
  return held;
}

export function prefix(held: Set<number>): number {
  let n = 0;
  while (held.has(n)) n += 1;
  return n;
}

export async function openPgCoverage(): Promise<PostgresCoverage> {
  return PostgresCoverage.open({ pool: postgresUrl(), sinks: [PG] });
}

/**
 * The shared `waitFor` at the cadence of these tests: a topology spans real
 * Kafka and PostgreSQL, so it asks every 100 ms and allows 60 s by default.
 */
export function waitFor(
  check: () => Promise<boolean> | boolean,
  /** What is awaited; a function is asked at the timeout, so it can say where things stood. */
  what: string | (() => string),
  timeoutMs = 60_000,
): Promise<void> {
  return waitUntil(check, what, { timeoutMs, everyMs: 100 });
}

/** A member as openMember opens it. */
export type Member = Awaited<ReturnType<typeof openMember>>;
