import type { Consumer, GroupAssignment } from '@platformatic/kafka';
import { partitionKey, type SourcePartition } from '@thalweg/connector-core';
import type {
  CommitOffset,
  CommitResult,
  ConsumerEvent,
  ConsumerFactory,
  ConsumerPort,
  ConsumerSettings,
  FetchedBatch,
} from './consumer-port.js';
import { fetchedCount } from './consumer-port.js';
import { RawFetcher } from './platformatic-raw-fetch.js';
import { OWNERSHIP_ERRORS } from './commit-error.js';
import { KafkaSourceError, unknownPartitions } from './errors.js';
import { loadPlatformatic, type PlatformaticModule } from './platformatic-load.js';
import {
  fetchRound,
  startingPositions,
  type FetchScope,
  type Owned,
} from './platformatic-fetch.js';
import { apiIdsOf, isUnknownTopic, missingTopics, toPartitions } from './platformatic-support.js';
import { FailureRun, REAL_OUTAGE, type OutageHandling } from './outage-bound.js';

const APPLIED: CommitResult = Object.freeze({ kind: 'applied' });

type Phase = 'joining' | 'positioning' | 'fetching';

/**
 * `platformaticConsumer` over a given client module (tests hand it one whose
 * calls fail, and a clock of their own). Kept out of the exported API: its
 * type names the client's module, which a kafkajs user need not have
 * installed.
 */
export const platformaticConsumerWith =
  (
    load: () => Promise<PlatformaticModule>,
    outage: OutageHandling = REAL_OUTAGE,
  ): ConsumerFactory =>
  (settings, emit) => {
    const port = new PlatformaticPort(settings, emit, load, outage);
    // A plain object, as kafkajsConsumer's: a caller may wrap it with a spread.
    return {
      connect: () => port.connect(),
      subscribe: () => port.subscribe(),
      run: (onBatch) => port.run(onBatch),
      commit: (offsets) => port.commit(offsets),
      seek: (partition, offset) => {
        port.seek(partition, offset);
      },
      pause: (partitions) => {
        port.pause(partitions);
      },
      resume: (partitions) => {
        port.resume(partitions);
      },
      disconnect: () => port.disconnect(),
    };
  };

class PlatformaticPort implements ConsumerPort {
  #client: Consumer | null = null;
  #fetcher: RawFetcher | null = null;
  readonly #settings: ConsumerSettings;
  readonly #emit: (event: ConsumerEvent) => void;
  readonly #topics: readonly string[];
  #owned = new Map<string, Owned>();
  readonly #paused = new Set<string>();
  readonly #sought = new Map<string, bigint>();
  #generation = 0;
  #phase: Phase = 'joining';
  #stopped = false;
  readonly #closing = new AbortController();
  #wake: (() => void) | undefined;
  #loop: Promise<void> | null = null;
  #onBatch: (batch: FetchedBatch) => void = () => undefined;

  readonly #load: () => Promise<PlatformaticModule>;
  readonly #outage: OutageHandling;

  constructor(
    settings: ConsumerSettings,
    emit: (event: ConsumerEvent) => void,
    load: () => Promise<PlatformaticModule>,
    outage: OutageHandling,
  ) {
    this.#load = load;
    this.#outage = outage;
    this.#settings = settings;
    this.#emit = emit;
    const a = settings.assignment;
    this.#topics =
      a.kind === 'group' ? [...a.topics] : [...new Set(a.partitions.map((p) => p.topic))];
  }

  async connect(): Promise<void> {
    const kafkaModule = await loadPlatformatic(this.#load);
    const { Consumer } = kafkaModule;
    const s = this.#settings;
    const client = new Consumer({
      clientId: s.clientId,
      bootstrapBrokers: [...s.brokers],
      groupId: s.groupId,
      autocommit: false,
      autocreateTopics: false,
      sessionTimeout: s.sessionTimeout,
      rebalanceTimeout: s.rebalanceTimeout,
      heartbeatInterval: s.heartbeatInterval,
      // No fetch options: the client's fetch is not used (platformatic-raw-fetch.ts).
    });
    // The client emits 'error' when a rejoin fails for good; unheard, Node would throw it.
    client.on('error', (error: unknown) => {
      this.#crash(error);
    });
    this.#client = client;
    this.#fetcher = new RawFetcher(kafkaModule, s.clientId);
    await client.metadata({ topics: [] });
  }

  async subscribe(): Promise<void> {
    const client = this.#need();
    try {
      await client.metadata({ topics: [...this.#topics], autocreateTopics: false });
    } catch (error) {
      if (!isUnknownTopic(error)) throw error;
      throw await missingTopics(client, this.#topics, this.#settings.brokers, error);
    }
    client.topics.trackAll(...this.#topics);
  }

  async run(onBatch: (batch: FetchedBatch) => void): Promise<void> {
    this.#onBatch = onBatch;
    const client = this.#need();
    const s = this.#settings;
    this.#emit({ kind: 'join-starting' });
    if (s.assignment.kind === 'group') {
      client.on('consumer:group:rebalance', () => {
        this.#revoked();
      });
      client.on('consumer:group:join', (payload: { assignments?: GroupAssignment[] }) => {
        this.#joined(toPartitions(payload.assignments ?? []));
      });
      await client.joinGroup({
        sessionTimeout: s.sessionTimeout,
        rebalanceTimeout: s.rebalanceTimeout,
        heartbeatInterval: s.heartbeatInterval,
      });
    } else {
      const metadata = await client.metadata({ topics: [...this.#topics] });
      const missing = s.assignment.partitions.filter(
        (p) => metadata.topics.get(p.topic)?.partitions[p.partition] === undefined,
      );
      const refused = unknownPartitions(missing);
      if (refused !== null) throw refused;
      this.#joined(s.assignment.partitions);
    }
    this.#loop ??= this.#fetchLoop();
  }

  async commit(offsets: readonly CommitOffset[]): Promise<CommitResult> {
    if (this.#settings.assignment.kind === 'fixed') {
      return {
        kind: 'not-running',
        detail: 'an assigned source is in no group and commits nothing',
      };
    }
    const client = this.#client;
    if (client === null || this.#stopped) {
      return { kind: 'not-running', detail: 'the @platformatic/kafka consumer is not running' };
    }
    try {
      await client.commit({
        offsets: offsets.map((o) => ({
          topic: o.topic,
          partition: o.partition,
          offset: BigInt(o.next),
          leaderEpoch: -1,
        })),
      });
      return APPLIED;
    } catch (error) {
      for (const id of apiIdsOf(error)) {
        if (OWNERSHIP_ERRORS.has(id))
          return { kind: 'ownership-changed', detail: `the broker answered ${id}` };
      }
      throw error;
    }
  }

  seek(partition: SourcePartition, offset: number): void {
    const key = partitionKey(partition);
    const owned = this.#owned.get(key);
    if (owned === undefined || owned.position === null) {
      this.#sought.set(key, BigInt(offset));
      return;
    }
    owned.position = BigInt(offset);
    owned.version += 1;
  }

  pause(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) {
      const key = partitionKey(p);
      this.#paused.add(key);
      const owned = this.#owned.get(key);
      if (owned !== undefined) owned.version += 1;
    }
  }

  resume(partitions: readonly SourcePartition[]): void {
    for (const p of partitions) this.#paused.delete(partitionKey(p));
    this.#notify();
  }

  async disconnect(): Promise<void> {
    this.#stop();
    await this.#loop;
    const client = this.#client;
    if (client === null) return;
    if (this.#settings.assignment.kind === 'group' && client.memberId !== null) {
      // Best effort: a member that does not leave is dropped at its session timeout.
      await new Promise<void>((resolve) => {
        client.leaveGroup(false, () => {
          resolve();
        });
      });
    }
    await this.#fetcher?.close();
    await client.close();
  }

  /** A call, not a field read, so the fetch loop's narrowing does not outlive an await. */
  #halted(): boolean {
    return this.#stopped;
  }

  #need(): Consumer {
    if (this.#client === null) throw new Error('connect() first');
    return this.#client;
  }

  #revoked(): void {
    if (this.#stopped) return;
    this.#generation += 1;
    this.#phase = 'joining';
    this.#emit({ kind: 'rebalancing' });
    this.#emit({ kind: 'join-starting' });
  }

  #joined(list: readonly SourcePartition[]): void {
    if (this.#stopped) return;
    this.#generation += 1;
    const generation = this.#generation;
    this.#phase = 'positioning';
    this.#sought.clear();
    this.#owned = new Map(
      list.map((p) => {
        const key = partitionKey(p);
        return [key, { partition: p, key, position: null, version: 0 }];
      }),
    );
    // The source seeks here, synchronously, what it already holds.
    this.#emit({ kind: 'joined', assignment: list });
    void this.#positionWithRetry(generation);
  }

  /**
   * Positions the join's partitions, trying again on a failure (with the
   * fetch loop's backoff and bound). A failure that says the group moved on
   * (a rebalance under way) is left to the rejoin the client makes, which
   * positions again; so is one of a join that is no longer the last.
   */
  async #positionWithRetry(generation: number): Promise<void> {
    const failures = this.#failureRun();
    // A join that is no longer the last, or a consumer closed during a backoff, positions nothing.
    while (generation === this.#generation && !this.#halted()) {
      try {
        await this.#position(generation);
        return;
      } catch (error) {
        if (generation !== this.#generation || this.#halted()) return;
        if ([...apiIdsOf(error)].some((id) => OWNERSHIP_ERRORS.has(id))) return;
        if (!(await failures.failed())) {
          this.#crash(error);
          return;
        }
      }
    }
  }

  /** Each owned partition's start: a seek, else its committed offset, else the log's start or end. */
  async #position(generation: number): Promise<void> {
    const owned = [...this.#owned.values()];
    const starts = await startingPositions(
      this.#need(),
      owned.map((o) => o.partition),
      this.#settings.assignment.kind === 'group',
      this.#settings.fromBeginning,
    );
    if (generation !== this.#generation || this.#stopped) return;
    for (const o of owned) {
      const start = this.#sought.get(o.key) ?? starts.get(o.key);
      if (start === undefined) throw new Error(`no offset listed for ${o.key}`);
      o.position = start;
    }
    this.#sought.clear();
    this.#phase = 'fetching';
    this.#emit({ kind: 'fetching' });
    this.#notify();
  }

  /**
   * Fetches while there are partitions to read. A failed round (a broker
   * unreachable, a leader moved) is tried again after a backoff, leaders
   * asked anew; the consumer fails once rounds have failed for the
   * outage policy's `giveUpAfterMs`, or at once on an error of the source's
   * own (a position lost, a record refused).
   */
  async #fetchLoop(): Promise<void> {
    const failures = this.#failureRun();
    while (!this.#halted()) {
      const round = this.#phase === 'fetching' ? this.#wanted() : [];
      if (round.length === 0) {
        await this.#changed();
        continue;
      }
      try {
        await fetchRound(this.#scope(), round);
        failures.succeeded();
      } catch (error) {
        if (this.#halted()) return;
        this.#client?.clearMetadata();
        if (error instanceof KafkaSourceError || !(await failures.failed())) {
          this.#crash(error);
          return;
        }
      }
    }
  }

  #failureRun(): FailureRun {
    return new FailureRun(this.#outage, this.#closing.signal);
  }

  #scope(): FetchScope {
    const generation = this.#generation;
    return {
      client: this.#need(),
      fetcher: this.#fetcher as RawFetcher,
      settings: this.#settings,
      topics: this.#topics,
      current: (a) =>
        generation === this.#generation &&
        !this.#stopped &&
        this.#owned.get(a.owned.key) === a.owned &&
        a.owned.version === a.version &&
        !this.#paused.has(a.owned.key),
      deliver: (batch) => {
        if (fetchedCount(batch) > 0) this.#onBatch(batch);
        else this.#emit({ kind: 'filtered-batch', batch });
      },
    };
  }

  #wanted(): Owned[] {
    return [...this.#owned.values()].filter((o) => o.position !== null && !this.#paused.has(o.key));
  }

  #crash(error: unknown): void {
    if (this.#stopped) return;
    this.#stop();
    const cause = error instanceof Error ? error : new Error(String(error));
    this.#emit({ kind: 'crashed', error: cause, restart: false });
  }

  /** Ends the fetch loop and cuts short any backoff under way. */
  #stop(): void {
    this.#stopped = true;
    this.#closing.abort();
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #changed(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }
}
