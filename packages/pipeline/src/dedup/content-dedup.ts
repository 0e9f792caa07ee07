import { hash } from 'node:crypto';
import {
  ConfigError,
  RecordIdHasher,
  type SourceBatch,
  type SourceRecord,
} from '@thalweg/connector-core';
import type { Coordination, ExpiringSet } from '@thalweg/coordination';
import type { DedupConfig } from './dedup-config.js';

/** Bytes of a content hash: SHA-256 truncated to 128 bits, as the record id. */
const CONTENT_HASH_BYTES = 16;

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
  readonly set: ExpiringSet;
  checked: number;
  dropped: number;
  skipped: number;
  unhashable: number;
}

/**
 * Content dedup on the secondaries' path (ADR 0036): one mechanism, used by
 * the live ingest loop before a piece is offered to the lanes and by
 * recovery before a replayed batch is derived. Raw is never filtered.
 *
 * The seen-set maps a content hash to the record id of its first
 * occurrence. A record is dropped only when the set holds its hash under a
 * DIFFERENT record id. A false positive (dropping a record that is not a
 * duplicate) is impossible by construction: the set is exact (never a
 * probabilistic filter: it answers a value only for a key that was written),
 * eviction and expiry only make a key read as absent, a record's own replay
 * (recovery, a redelivery at the same offset) carries the same record id and
 * is delivered, and two records share a hash only when they agree on the
 * declared natural key (or byte for byte, on a stream declared unique), which
 * the contract says makes them the same logical record. The batching races
 * all fall on the other side: two pods seeing one hash at once both deliver
 * (a missed dedup, a false negative), and sinks stay idempotent on the
 * record id regardless.
 *
 * When the set fails or times out, the batch goes on with dedup off: it is
 * counted as skipped and logged, and ingest never stops for it.
 */
export class ContentDedup {
  private readonly streams = new Map<string, Stream>();
  private readonly hashers = new Map<string, RecordIdHasher>();

  constructor(
    configs: Readonly<Record<string, DedupConfig>>,
    coordination: Coordination | undefined,
    private readonly cluster: string,
    private readonly log: (line: string) => void,
  ) {
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
      const set = coordination.expiringSet(`dedup/${stream}`, { maxEntries: config.maxEntries });
      this.streams.set(stream, { config, set, checked: 0, dropped: 0, skipped: 0, unhashable: 0 });
    }
  }

  /** Whether any stream has dedup on (no stream: `filter` is never called). */
  get enabled(): boolean {
    return this.streams.size > 0;
  }

  /**
   * The batch with its upstream duplicates removed; its span is unchanged,
   * so a dropped record's offset stays covered (no gap). Duplicates inside
   * the batch are found locally first, then ONE bulk lookup and ONE bulk
   * write go to the shared set.
   */
  async filter(batch: SourceBatch): Promise<SourceBatch> {
    const s = this.streams.get(batch.span.topic);
    if (s === undefined || batch.records.length === 0) return batch;
    // Hash -> the records of this batch carrying it, with their record ids, in offset order.
    const groups = new Map<string, { record: SourceRecord; id: string }[]>();
    const hasher = this.hasher(batch.span.topic, batch.span.partition);
    for (const record of batch.records) {
      const hash = contentHash(s.config, record);
      if (hash === null) {
        s.unhashable += 1;
        continue;
      }
      const id = hasher.id(record.offset, record.value).toString('hex');
      const group = groups.get(hash);
      if (group === undefined) groups.set(hash, [{ record, id }]);
      else group.push({ record, id });
    }
    if (groups.size === 0) return batch;
    const hashes = [...groups.keys()];
    const checked = hashes.reduce((n, h) => n + (groups.get(h)?.length ?? 0), 0);
    let seen: (string | null)[];
    try {
      seen = await within(s.set.getMany(hashes), s.config.timeoutMs);
    } catch (error) {
      s.skipped += checked;
      this.log(
        `dedup ${batch.span.topic}: the seen-set is unavailable; ${checked} records go on ` +
          `with dedup off: ${message(error)}`,
      );
      return batch;
    }
    s.checked += checked;
    const drop = new Set<SourceRecord>();
    const fresh: string[] = [];
    const firstIds: string[] = [];
    hashes.forEach((hash, i) => {
      const group = groups.get(hash) ?? [];
      const first = seen[i] ?? null;
      // Kept: the first occurrence itself (its replay), or, for a new hash, the
      // earliest record of the batch, which becomes the first occurrence.
      const keep = first === null ? group[0] : group.find((g) => g.id === first);
      if (first === null && keep !== undefined) {
        fresh.push(hash);
        firstIds.push(keep.id);
      }
      for (const g of group) if (g !== keep) drop.add(g.record);
    });
    if (fresh.length > 0) {
      try {
        await within(s.set.addMany(fresh, s.config.windowMs, firstIds), s.config.timeoutMs);
      } catch (error) {
        // The lookup answered, so this batch's decisions stand; later
        // duplicates of these hashes will be missed (the safe direction).
        s.skipped += fresh.length;
        this.log(
          `dedup ${batch.span.topic}: ${fresh.length} new hashes not remembered, the ` +
            `seen-set is unavailable: ${message(error)}`,
        );
      }
    }
    if (drop.size === 0) return batch;
    s.dropped += drop.size;
    return { span: batch.span, records: batch.records.filter((r) => !drop.has(r)) };
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

  private hasher(topic: string, partition: number): RecordIdHasher {
    const key = `${partition}\u0000${topic}`;
    let h = this.hashers.get(key);
    if (h === undefined)
      this.hashers.set(key, (h = new RecordIdHasher(this.cluster, topic, partition)));
    return h;
  }
}

/**
 * The content hash of a record, hex: the declared fields of its JSON value
 * (their values, in the declared order) or the whole payload; null when a
 * declared field cannot be read, and such a record is never dropped. Fields
 * holding objects hash as written, so the same object with its keys in
 * another order reads as different content: a missed dedup, never a drop.
 */
export function contentHash(config: DedupConfig, record: SourceRecord): string | null {
  let input: Uint8Array | string;
  if (config.key === 'payload') {
    if (record.tombstone === true) return null;
    input = record.value;
  } else {
    let doc: unknown;
    try {
      doc = JSON.parse(utf8.decode(record.value));
    } catch {
      return null;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
    const values: unknown[] = [];
    for (const f of config.key.fields) {
      if (!Object.hasOwn(doc, f)) return null;
      values.push((doc as Record<string, unknown>)[f]);
    }
    input = JSON.stringify(values);
  }
  // The one-shot digest: for a few hundred bytes a Hash object's set-up dominates.
  return hash('sha256', input, 'hex').slice(0, CONTENT_HASH_BYTES * 2);
}

const utf8 = new TextDecoder();

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
