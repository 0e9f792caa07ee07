import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { backoffDelay, sleep, type RetryPolicy } from '@thalweg/connector-core';
import { LeaseBackend } from './lease-backend.js';
import { decodeLease, encodeLease } from './lease-document.js';
import { LeaseError } from './lease-errors.js';
import { parseS3LeaseOptions, type S3LeaseSettings } from './lease-options.js';
import { S3LeaseObjects, type LeaseObjects, type StoredObject } from './lease-objects.js';
import { compareLeaseKeys, holds, leaseStateOf, type LeaseRecord } from './lease-record.js';
import type { Lease, LeaseState } from './lease-store.js';

/**
 * Conditional writes of one call before it gives up with
 * TWG_LEASE_CONTENTION, and the backoff after the second lost write:
 * connector-core's one retry policy.
 */
export const DEFAULT_LEASE_RETRY: RetryPolicy = {
  maxAttempts: 8,
  baseDelayMs: 10,
  maxDelayMs: 500,
};

/** Default `clockSkewMarginMs`: NTP-synchronised hosts agree far better; TTLs are tens of seconds. */
export const DEFAULT_CLOCK_SKEW_MARGIN_MS = 1000;

interface S3LeaseStoreCommon {
  /** Key prefix under which `leases/` is kept, e.g. raw's `raw/orders/_thalweg/`. */
  readonly prefix?: string;
  /**
   * How much longer than its `expiresAt` a lease is still treated as held
   * by every other claimant, to absorb disagreement between the clocks of
   * the processes sharing the bucket. Must be much smaller than the TTL.
   */
  readonly clockSkewMarginMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** This process's clock, milliseconds since the epoch (injectable for tests). */
  readonly now?: () => number;
}

export type S3LeaseStoreOptions = S3LeaseStoreCommon &
  (
    | {
        /** A client the caller owns, or a configuration for one this store owns. */
        readonly s3: S3Client | S3ClientConfig;
        readonly bucket: string;
        readonly objects?: never;
      }
    | {
        /** Object storage through the seam (another store, or a test's fault injector). */
        readonly objects: LeaseObjects;
        readonly s3?: never;
        readonly bucket?: never;
      }
  );

/**
 * Leases on object storage: one small JSON object per key,
 * `<prefix>leases/<percent-encoded key>.json` (see `encodeLease`), changed
 * only by conditional writes — create with `If-None-Match: *`, replace and
 * delete with `If-Match: <etag>` of the version that was read and checked
 * (holder, token, state, expiry). A lost condition (412) means another
 * writer got there first: the object is read again and the call answers
 * from what it now holds, so of N concurrent claimants exactly one wins.
 *
 * Clocks: S3 offers no server clock a condition could compare against, so
 * expiry is judged on the calling process's clock. A claimant treats a
 * lease as expired only `clockSkewMarginMs` after its `expiresAt`, so a
 * claimant whose clock runs ahead of the holder's by less than the margin
 * cannot take a lease its holder still believes live. Clocks of all
 * processes sharing a bucket must agree within that margin, and the margin
 * must be much smaller than the TTL. `expiresAt` is on the holder's clock.
 *
 * Tokens: a claim's token is the larger of the previous token + 1 and the
 * claimant's clock in milliseconds, so it increases with every claim of a
 * key, and a key forgotten by `clearCompleted` and claimed again starts
 * above the tokens it issued before (clocks agreeing).
 *
 * A corrupt, foreign or newer-format object is an error naming the key and
 * the object; nothing is written over it.
 */
export class S3LeaseStore extends LeaseBackend {
  readonly clockSkewMarginMs: number;
  private readonly retry: RetryPolicy;
  private readonly now: () => number;

  private constructor(
    private readonly objects: LeaseObjects,
    private readonly prefix: string,
    options: S3LeaseSettings,
  ) {
    super();
    this.clockSkewMarginMs = options.clockSkewMarginMs ?? DEFAULT_CLOCK_SKEW_MARGIN_MS;
    this.retry = {
      maxAttempts: options.retry?.maxAttempts ?? DEFAULT_LEASE_RETRY.maxAttempts,
      baseDelayMs: options.retry?.baseDelayMs ?? DEFAULT_LEASE_RETRY.baseDelayMs,
      maxDelayMs: options.retry?.maxDelayMs ?? DEFAULT_LEASE_RETRY.maxDelayMs,
    };
    this.now = options.now ?? Date.now;
  }

  static async open(input: S3LeaseStoreOptions): Promise<S3LeaseStore> {
    const options = parseS3LeaseOptions(input);
    // The refinement leaves objects, or s3 with a bucket.
    const objects = options.objects ?? new S3LeaseObjects(options.s3 ?? {}, options.bucket ?? '');
    return new S3LeaseStore(objects, options.prefix, options);
  }

  protected async claimChecked(key: string, holder: string, ttlMs: number): Promise<Lease | null> {
    return this.transition<Lease | null>(key, (current, now) => {
      if (current?.state === 'complete') return { done: null };
      if (current?.state === 'held' && !this.expired(current, now)) return { done: null };
      const token = Math.max((current?.token ?? 0) + 1, now);
      const expiresAt = now + ttlMs;
      return {
        write: { holder, token, expiresAt, state: 'held', completedAt: null },
        answer: { key, holder, token, expiresAt },
      };
    });
  }

  protected async renewChecked(lease: Lease, ttlMs: number): Promise<Lease | null> {
    // Not conditional on expiry: while the token is unchanged nobody has
    // claimed the key since, so extending it cannot create a second holder.
    return this.transition<Lease | null>(lease.key, (current, now) => {
      if (!holds(current, lease) || current.state !== 'held') return { done: null };
      const expiresAt = now + ttlMs;
      return {
        write: { ...current, expiresAt },
        answer: { key: lease.key, holder: lease.holder, token: lease.token, expiresAt },
      };
    });
  }

  protected async completeChecked(lease: Lease): Promise<boolean> {
    return this.transition<boolean>(lease.key, (current, now) => {
      if (!holds(current, lease) || current.state === 'released') return { done: false };
      if (current.state === 'complete') return { done: true };
      return { write: { ...current, state: 'complete', completedAt: now }, answer: true };
    });
  }

  protected async releaseChecked(lease: Lease): Promise<void> {
    await this.transition<undefined>(lease.key, (current, now) => {
      if (!holds(current, lease) || current.state !== 'held') return { done: undefined };
      return { write: { ...current, state: 'released', expiresAt: now }, answer: undefined };
    });
  }

  protected async stateChecked(key: string): Promise<LeaseState> {
    const objectKey = this.objectKey(key);
    const found = await this.io(() => this.objects.get(objectKey));
    return this.describe(key, found === null ? null : this.decode(found, key, objectKey));
  }

  protected async listChecked(prefix: string): Promise<{ key: string; state: LeaseState }[]> {
    const found = await this.scan(prefix);
    return found.map(({ key, record }) => ({ key, state: this.describe(key, record) }));
  }

  protected async clearChecked(prefix: string): Promise<number> {
    const found = await this.scan(prefix);
    let cleared = 0;
    for (const { objectKey, record, etag } of found) {
      // Only the completed version that was read: a key cleared and claimed
      // again meanwhile has a new ETag, so its live lease is not deleted.
      if (
        record.state === 'complete' &&
        (await this.io(() => this.objects.remove(objectKey, etag)))
      )
        cleared += 1;
    }
    return cleared;
  }

  protected async dispose(): Promise<void> {
    await this.objects.close();
  }

  /**
   * One conditional change of a key: read, decide, write under the ETag
   * read. `decide` answers without writing (`done`) or names the record to
   * write and the answer once it is written. A lost write is followed by a
   * fresh read, so the call answers from what the winner wrote.
   */
  private async transition<T>(
    key: string,
    decide: (
      current: LeaseRecord | null,
      now: number,
    ) => { readonly done: T } | { readonly write: LeaseRecord; readonly answer: T },
  ): Promise<T> {
    const objectKey = this.objectKey(key);
    let pending: { readonly body: string; readonly answer: T } | null = null;
    for (let lost = 0; ;) {
      const current = await this.io(() => this.objects.get(objectKey));
      // The write reported lost is there after all: its answer was lost and
      // the SDK's retry of the same conditional put then lost to it.
      if (pending !== null && current?.body === pending.body) return pending.answer;
      const step = decide(
        current === null ? null : this.decode(current, key, objectKey),
        this.now(),
      );
      if ('done' in step) return step.done;
      const body = encodeLease(key, step.write);
      pending = { body, answer: step.answer };
      const won = await this.io(() =>
        current === null
          ? this.objects.create(objectKey, body)
          : this.objects.replace(objectKey, body, current.etag),
      );
      if (won) return step.answer;
      lost += 1;
      if (lost >= this.retry.maxAttempts) {
        throw new LeaseError(
          'TWG_LEASE_CONTENTION',
          `lease ${JSON.stringify(key)} (${this.objects.where(objectKey)}): ${lost} conditional writes lost to concurrent writers`,
        );
      }
      // The first loss is answered by the fresh read at once; repeated
      // losses (writers racing on a claimable key) back off with jitter.
      if (lost > 1) await sleep(backoffDelay(this.retry, lost - 1));
    }
  }

  /** Every lease object under `prefix`, read and decoded, in key order. */
  private async scan(
    prefix: string,
  ): Promise<{ key: string; objectKey: string; etag: string; record: LeaseRecord }[]> {
    const root = `${this.prefix}leases/`;
    const names = await this.io(() => this.objects.list(root + encodeURIComponent(prefix)));
    const found = await mapLimited(names, 8, async (objectKey) => {
      const key = keyOf(objectKey.slice(root.length));
      if (key === null) {
        throw new LeaseError(
          'TWG_LEASE_CORRUPT',
          `${this.objects.where(objectKey)} is not named like a lease object; it was left as it was`,
        );
      }
      const object = await this.io(() => this.objects.get(objectKey));
      // Deleted since the listing (cleared): nothing to report.
      if (object === null) return null;
      return { key, objectKey, etag: object.etag, record: this.decode(object, key, objectKey) };
    });
    return found.filter((f) => f !== null).sort((a, b) => compareLeaseKeys(a.key, b.key));
  }

  private describe(key: string, record: LeaseRecord | null): LeaseState {
    return leaseStateOf(key, record, record !== null && this.expired(record, this.now()));
  }

  private expired(record: LeaseRecord, now: number): boolean {
    return now >= record.expiresAt + this.clockSkewMarginMs;
  }

  private decode(object: StoredObject, key: string, objectKey: string): LeaseRecord {
    return decodeLease(object.body, key, this.objects.where(objectKey));
  }

  private objectKey(key: string): string {
    return `${this.prefix}leases/${encodeURIComponent(key)}.json`;
  }

  /** Failures of the seam that are not already lease errors are backend failures. */
  private async io<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      throw e instanceof LeaseError
        ? e
        : new LeaseError('TWG_LEASE_STORE_FAILED', 'lease object storage failed', e);
    }
  }
}

/**
 * The key of an object name, or null for a name this store does not write.
 * Percent-encoding maps each character on its own, so it preserves
 * prefixes: the objects of a key prefix are one listing prefix.
 */
function keyOf(name: string): string | null {
  if (!name.endsWith('.json')) return null;
  const encoded = name.slice(0, -'.json'.length);
  try {
    const key = decodeURIComponent(encoded);
    return key !== '' && encodeURIComponent(key) === encoded ? key : null;
  } catch {
    return null;
  }
}

async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
