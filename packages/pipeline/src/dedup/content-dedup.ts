import { ConfigError, type SourceBatch, type SourceRecord } from '@thalweg/connector-core';
import type { BinaryExpiringSet, Coordination, ExpiringSet } from '@thalweg/coordination';
import { BinaryDecision } from './binary-decision.js';
import type { DedupConfig } from './dedup-config.js';
import { HashThread } from './hash-thread.js';
import { UnconfirmedAdds } from './unconfirmed-adds.js';

/** One stream's dedup counters, in `stats().dedup` and the telemetry catalog. */
export interface DedupStats {
  readonly stream: string;
  /** Records looked up against the seen-set (live and in recovery replays). */
  readonly checked: number;
  /** Upstream duplicates not delivered to the secondaries (raw holds them). */
  readonly dropped: number;
  /** Records that went on with dedup off: the set failed or timed out. */
  readonly skipped: number;
  /** Records whose declared fields could not be read (not JSON, a field absent): passed. */
  readonly unhashable: number;
  /** dropped / checked, 0 before anything was checked: measure it before recommending dedup. */
  readonly duplicateRate: number;
}

interface Stream {
  readonly config: DedupConfig;
  /**
   * The seen-set: binary where the coordination offers it (mode 1 and the
   * fake in process, etcd as a copy in each process; decided at once, see
   * binary-decision.ts), string-keyed otherwise (pipelined lookups and
   * writes). `answered` once the binary set was ready (etcd: its copy loaded).
   */
  readonly seen:
    | { readonly binary: BinaryDecision; readonly set: BinaryExpiringSet; answered: boolean }
    | { readonly strings: ExpiringSet };
  /** The previous piece's decision: pieces are decided in the order they were given. */
  tail: Promise<unknown>;
  readonly unconfirmed: UnconfirmedAdds;
  /** Writes to the set in flight, at most MAX_WRITES_IN_FLIGHT. */
  readonly writes: Set<Promise<void>>;
  checked: number;
  dropped: number;
  skipped: number;
  unhashable: number;
}

/** Writes to the set one stream keeps in flight before a decision waits for one to settle. */
const MAX_WRITES_IN_FLIGHT = 4;

/** Hash -> the record (or records, in offset order) of one piece carrying it. */
type Groups = Map<string, SourceRecord | SourceRecord[]>;

/**
 * Which record the set names as a hash's first occurrence: its partition and
 * offset, which identify it inside its stream (the set is per stream). Its
 * replay (recovery, a redelivery) comes back at the same place and is
 * delivered; a retry elsewhere is another place. Cheaper than the record id
 * (no digest) and just as exact for this question.
 */
const place = (record: SourceRecord, partition: number): string => `${partition}/${record.offset}`;

/** What the bulk lookup answered: the first occurrence's place per hash, or why the set could not say. */
type Lookup = { readonly seen: readonly (string | null)[] } | { readonly failed: unknown };

/**
 * Content dedup on the secondaries' path (ADR 0036): one mechanism, used by
 * the live ingest loop before a piece is offered to the lanes and by
 * recovery before a replayed batch is derived. Raw is never filtered.
 *
 * The seen-set maps a content hash to the place (partition and offset) of
 * its first occurrence. A record is dropped only when the set holds its hash
 * under a DIFFERENT place. A false positive (dropping a record that is not a
 * duplicate) is impossible by construction: the set is exact (never a
 * probabilistic filter: it answers a value only for a key that was written),
 * eviction and expiry only make a key read as absent, a record's own replay
 * (recovery, a redelivery at the same offset) comes back at the same place and
 * is delivered, and two records share a hash only when they agree on the
 * declared natural key (or byte for byte, on a stream declared unique), which
 * the contract says makes them the same logical record. The batching races
 * all fall on the other side: two pods seeing one hash at once both deliver
 * (a missed dedup, a false negative), and sinks stay idempotent on the
 * record id regardless.
 *
 * On a binary set (mode 1, the fake, etcd: every mode that offers one) a
 * piece is decided in one `claimMany` against the set's copy in this
 * process (binary-decision.ts); on etcd the set writes it for the other
 * processes in the background. Otherwise, on a string set:
 *
 * Pipelined: a piece's bulk lookup leaves as soon as `filter` is called,
 * while earlier pieces are still being decided; decisions are made one at a
 * time in call order, and the first occurrences they find are written to
 * the set in the background (a few writes in flight per stream).
 * `UnconfirmedAdds` makes a lookup that ran ahead of those writes still
 * see them, so inside one process no duplicate is missed for it.
 *
 * When the set fails or times out, the batch goes on with dedup off: it is
 * counted as skipped and logged, and ingest never stops for it.
 */
export class ContentDedup {
  private readonly streams = new Map<string, Stream>();
  /** Parses and digests the records off the ingest thread (hash-thread.ts). */
  private readonly hashing: HashThread;

  constructor(
    configs: Readonly<Record<string, DedupConfig>>,
    coordination: Coordination | undefined,
    private readonly log: (line: string) => void,
  ) {
    this.hashing = new HashThread(log);
    for (const [stream, config] of Object.entries(configs)) {
      if (coordination === undefined) {
        throw new ConfigError(
          `config.dedup.${stream}`,
          'needs a shared seen-set: give the spec a `coordination` of mode 1, 3, 5 or 7',
        );
      }
      if (coordination.mode === 0) {
        throw new ConfigError(
          'coordination.mode',
          `is 0 (off), but config.dedup.${stream} enables content dedup, which needs the ` +
            'expiring set of mode 1, 3, 5 or 7',
        );
      }
      const name = `dedup/${stream}`;
      const options = { maxEntries: config.maxEntries };
      const binary = coordination.binarySet?.(name, {
        ...options,
        // A claim that never reached the other processes (etcd): like a failed string write.
        onUnwritten: (keys, error) => {
          const s = this.streams.get(stream);
          if (s !== undefined) s.skipped += keys;
          log(
            `dedup ${stream}: ${keys} new hashes not remembered, the seen-set is ` +
              `unavailable: ${message(error)}`,
          );
        },
      });
      this.streams.set(stream, {
        config,
        seen:
          binary === undefined
            ? { strings: coordination.expiringSet(name, options) }
            : {
                binary: new BinaryDecision(binary, config.windowMs),
                set: binary,
                answered: false,
              },
        tail: Promise.resolve(),
        unconfirmed: new UnconfirmedAdds(),
        writes: new Set(),
        checked: 0,
        dropped: 0,
        skipped: 0,
        unhashable: 0,
      });
    }
    if (this.enabled) this.hashing.start();
  }

  /** Whether any stream has dedup on (no stream: `filter` is never called). */
  get enabled(): boolean {
    return this.streams.size > 0;
  }

  /**
   * The batch with its upstream duplicates removed; its span is unchanged,
   * so a dropped record's offset stays covered (no gap). Duplicates inside
   * the batch are found locally first, then ONE bulk lookup and ONE bulk
   * write go to the shared set. The returned promises of one stream settle
   * in call order; they never reject for the set's sake.
   */
  filter(batch: SourceBatch): Promise<SourceBatch> {
    const s = this.streams.get(batch.span.topic);
    if (s === undefined) return Promise.resolve(batch);
    const seen = s.seen;
    const decided =
      'binary' in seen
        ? this.decideAtOnce(s, seen, batch, s.tail)
        : this.decide(s, seen.strings, batch, s.tail);
    s.tail = decided.catch(() => undefined);
    return decided;
  }

  /**
   * Resolves once every decision made and every write to the sets started
   * has settled, then stops the hash thread (a clean shutdown waits for it;
   * nothing is filtered after it).
   */
  async settled(): Promise<void> {
    for (const s of this.streams.values()) {
      await s.tail;
      await Promise.all(s.writes);
      if ('binary' in s.seen) await s.seen.set.flushed();
    }
    await this.hashing.close();
  }

  /**
   * A piece against a binary set: hashed off-thread, then decided and
   * remembered in one call. Until the set first answered (etcd loads its
   * copy), a piece waits up to `timeoutMs` for it; a set that cannot answer
   * throws, and the piece goes on with dedup off.
   */
  private async decideAtOnce(
    s: Stream,
    seen: { readonly binary: BinaryDecision; readonly set: BinaryExpiringSet; answered: boolean },
    batch: SourceBatch,
    prior: Promise<unknown>,
  ): Promise<SourceBatch> {
    const digests = await this.hashing.digests(s.config.key, batch.records);
    let checked = 0;
    for (const h of digests.hashed) checked += h;
    s.unhashable += batch.records.length - checked;
    await prior;
    if (checked === 0) return batch;
    if (!seen.answered) {
      seen.answered = await within(seen.set.ready(), s.config.timeoutMs).then(
        () => true,
        () => false,
      );
    }
    let outcome;
    try {
      outcome = seen.binary.decide(batch, digests);
    } catch (error) {
      s.skipped += checked;
      this.log(
        `dedup ${batch.span.topic}: the seen-set is unavailable; ${checked} records go on ` +
          `with dedup off: ${message(error)}`,
      );
      return batch;
    }
    s.checked += checked;
    s.dropped += outcome.dropped;
    return outcome.dropped === 0 ? batch : { span: batch.span, records: outcome.records };
  }

  private async decide(
    s: Stream,
    set: ExpiringSet,
    batch: SourceBatch,
    prior: Promise<unknown>,
  ): Promise<SourceBatch> {
    const keys = await this.hashing.hash(s.config.key, batch.records);
    const groups = this.groups(batch, keys);
    const unhashable = keys.reduce((n, k) => (k === null ? n + 1 : n), 0);
    s.unhashable += unhashable;
    const hashes = [...groups.keys()];
    const epoch = s.unconfirmed.lookupIssued();
    // Issued before waiting for the pieces ahead: their decisions and this lookup overlap.
    const lookup: Promise<Lookup> =
      hashes.length === 0
        ? Promise.resolve({ seen: [] })
        : within(set.getMany(hashes), s.config.timeoutMs).then(
            (seen) => ({ seen }),
            (failed: unknown) => ({ failed }),
          );
    try {
      await prior;
      const answer = await lookup;
      if (hashes.length === 0) return batch;
      const checked = batch.records.length - unhashable;
      if ('failed' in answer) {
        s.skipped += checked;
        this.log(
          `dedup ${batch.span.topic}: the seen-set is unavailable; ${checked} records go on ` +
            `with dedup off: ${message(answer.failed)}`,
        );
        return batch;
      }
      s.checked += checked;
      const drop = new Set<SourceRecord>();
      const fresh = new Map<string, string>();
      const at = batch.span.partition;
      hashes.forEach((hash, i) => {
        const group = groups.get(hash);
        if (group === undefined) return;
        const first = answer.seen[i] ?? s.unconfirmed.firstId(hash, epoch);
        // Kept: the first occurrence itself (its replay), or, for a new hash, the
        // earliest record of the batch, which becomes the first occurrence.
        const earliest = Array.isArray(group) ? group[0] : group;
        const keep =
          first === null
            ? earliest
            : Array.isArray(group)
              ? group.find((r) => place(r, at) === first)
              : place(group, at) === first
                ? group
                : undefined;
        if (first === null && keep !== undefined) fresh.set(hash, place(keep, at));
        if (!Array.isArray(group)) {
          if (group !== keep) drop.add(group);
          return;
        }
        for (const r of group) if (r !== keep) drop.add(r);
      });
      if (fresh.size > 0) await this.remember(s, set, batch.span.topic, fresh);
      if (drop.size === 0) return batch;
      s.dropped += drop.size;
      return { span: batch.span, records: batch.records.filter((r) => !drop.has(r)) };
    } finally {
      s.unconfirmed.decided(epoch);
    }
  }

  /** The batch's records grouped by their hash (`hashes[i]` is record i's; unhashable ones pass). */
  private groups(batch: SourceBatch, hashes: readonly (string | null)[]): Groups {
    const groups: Groups = new Map();
    for (const [i, record] of batch.records.entries()) {
      const hash = hashes[i] ?? null;
      if (hash === null) continue;
      const group = groups.get(hash);
      if (group === undefined) groups.set(hash, record);
      else if (Array.isArray(group)) group.push(record);
      else groups.set(hash, [group, record]);
    }
    return groups;
  }

  /**
   * Starts writing the new first occurrences to the set, waiting first for
   * a slot when MAX_WRITES_IN_FLIGHT are out. The decision does not wait for
   * the write itself: until it settles, `UnconfirmedAdds` answers for it.
   */
  private async remember(
    s: Stream,
    set: ExpiringSet,
    topic: string,
    fresh: Map<string, string>,
  ): Promise<void> {
    while (s.writes.size >= MAX_WRITES_IN_FLIGHT) await Promise.race(s.writes);
    const settle = s.unconfirmed.writing(fresh);
    const write = within(
      set.addMany([...fresh.keys()], s.config.windowMs, [...fresh.values()]),
      s.config.timeoutMs,
    )
      .catch((error: unknown) => {
        // The lookup answered, so the decisions stand; later duplicates of
        // these hashes will be missed (the safe direction).
        s.skipped += fresh.size;
        this.log(
          `dedup ${topic}: ${fresh.size} new hashes not remembered, the ` +
            `seen-set is unavailable: ${message(error)}`,
        );
      })
      .finally(() => {
        settle();
        s.writes.delete(write);
      });
    s.writes.add(write);
  }

  stats(): DedupStats[] {
    return [...this.streams].map(([stream, s]) => ({
      stream,
      checked: s.checked,
      dropped: s.dropped,
      skipped: s.skipped,
      unhashable: s.unhashable,
      duplicateRate: s.checked === 0 ? 0 : s.dropped / s.checked,
    }));
  }
}

/** `work`, or a rejection once `ms` passed without it settling. */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
