import { ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { SinkId, SourceCursor } from '@thalweg/connector-core';
import { CoverageBackend } from '../coverage-backend.js';
import type { CoverageDelta, CoverageKey, CursorKey } from '../coverage-store.js';
import { checkRewind, laterCursor } from '../cursor-check.js';
import { RangeSet } from '../range-set.js';
import type { RetryPolicy } from '@thalweg/connector-core';
import { getObject, updateObject } from './conditional-object.js';
import {
  decodeCoverage,
  decodeCursors,
  destinationId,
  encodeCoverage,
  encodeCursors,
  type CoverageDocument,
  type CursorDocument,
} from './coverage-document.js';
import { parseS3CoverageOptions } from './s3-coverage-options.js';

export interface S3CoverageOptions {
  /** A client the caller owns, or a configuration for one this store owns. */
  readonly s3: S3Client | S3ClientConfig;
  readonly bucket: string;
  /** Key prefix, e.g. the raw table's location `raw/orders/_thalweg/`. */
  readonly prefix?: string;
  readonly sinks: readonly SinkId[];
  readonly retry?: Partial<RetryPolicy>;
}

/**
 * The durable tier on object storage: one small object per sink
 * (`<prefix>coverage/<sink>.json`), updated by read-merge-write under
 * conditional writes. Each object is updated atomically; a call spanning
 * several sinks writes one object per sink, so an I/O failure part-way can
 * leave some sinks recorded — each recorded range is still true, so that is
 * lag (a replay), never lead, and repeating the call is harmless.
 */
export class S3Coverage extends CoverageBackend {
  private readonly s3: S3Client;
  private readonly ownsClient: boolean;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly retry: RetryPolicy;
  /** Attempts of the last read-merge-write, for tests and metrics. */
  lastAttempts = 0;

  constructor(options: S3CoverageOptions) {
    const o = parseS3CoverageOptions(options);
    super(o.sinks);
    this.ownsClient = o.ownsClient;
    this.s3 = o.s3;
    this.bucket = o.bucket;
    this.prefix = o.prefix;
    this.retry = o.retry;
  }

  protected async mergeChecked(deltas: readonly CoverageDelta[]): Promise<void> {
    const bySink = new Map<SinkId, CoverageDelta[]>();
    for (const d of deltas) bySink.set(d.key.sink, [...(bySink.get(d.key.sink) ?? []), d]);
    for (const [sink, list] of bySink) {
      const key = this.coverageKey(sink);
      this.lastAttempts = await updateObject(
        this.s3,
        this.bucket,
        key,
        (body) => {
          const doc: CoverageDocument =
            body === null
              ? { sink, destinations: new Map() }
              : decodeCoverage(body, sink, this.where(key));
          let grew = false;
          for (const d of list) {
            const id = destinationId(d.key.topic, d.key.partition);
            let dest = doc.destinations.get(id);
            if (dest === undefined) {
              dest = { topic: d.key.topic, partition: d.key.partition, set: new RangeSet() };
              doc.destinations.set(id, dest);
            }
            for (const r of d.ranges) grew = dest.set.add(r.start, r.end) || grew;
          }
          return grew ? encodeCoverage(doc) : null;
        },
        this.retry,
      );
    }
  }

  protected async read(key: CoverageKey): Promise<RangeSet> {
    const doc = await this.document(key.sink);
    return doc?.destinations.get(destinationId(key.topic, key.partition))?.set ?? new RangeSet();
  }

  protected async listDestinations(): Promise<CoverageKey[]> {
    const out: CoverageKey[] = [];
    for (const sink of this.sinks) {
      const doc = await this.document(sink);
      for (const d of doc?.destinations.values() ?? [])
        if (d.set.rangeCount > 0) out.push({ sink, topic: d.topic, partition: d.partition });
    }
    return out;
  }

  protected async writeCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    await this.updateCursor(key, (stored) => {
      const kept = laterCursor(stored, cursor);
      return stored !== null && kept === stored ? null : kept;
    });
  }

  protected async replaceCursor(key: CursorKey, cursor: SourceCursor): Promise<void> {
    // Checked against what each attempt read: a concurrent writer's later
    // cursor is re-read on the retry, and a rewind past it is refused.
    await this.updateCursor(key, (stored) => {
      checkRewind(key, stored, cursor);
      return cursor;
    });
  }

  /**
   * One conditional read-modify-write of the source's cursor document:
   * `decide` gets the stored cursor of `key` as each attempt read it and
   * returns the one to store, or null to leave the document as it is.
   */
  private async updateCursor(
    key: CursorKey,
    decide: (stored: SourceCursor | null) => SourceCursor | null,
  ): Promise<void> {
    const objectKey = this.cursorKey(key.source);
    this.lastAttempts = await updateObject(
      this.s3,
      this.bucket,
      objectKey,
      (body) => {
        const doc: CursorDocument =
          body === null
            ? { source: key.source, cursors: new Map() }
            : decodeCursors(body, key.source, this.where(objectKey));
        const id = destinationId(key.topic, key.partition);
        const next = decide(doc.cursors.get(id)?.cursor ?? null);
        if (next === null) return null;
        doc.cursors.set(id, { topic: key.topic, partition: key.partition, cursor: next });
        return encodeCursors(doc);
      },
      this.retry,
    );
  }

  protected async readCursor(key: CursorKey): Promise<SourceCursor | null> {
    const objectKey = this.cursorKey(key.source);
    const found = await getObject(this.s3, this.bucket, objectKey);
    if (found === null) return null;
    return (
      decodeCursors(found.body, key.source, this.where(objectKey)).cursors.get(
        destinationId(key.topic, key.partition),
      )?.cursor ?? null
    );
  }

  protected async release(): Promise<void> {
    if (this.ownsClient) this.s3.destroy();
  }

  /** Every coverage object under the prefix, for diagnostics. */
  async listObjects(): Promise<string[]> {
    const out = await this.s3.send(
      new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.prefix}coverage/` }),
    );
    return (out.Contents ?? []).map((o) => o.Key ?? '').filter((k) => k !== '');
  }

  private async document(sink: SinkId): Promise<CoverageDocument | null> {
    const key = this.coverageKey(sink);
    const found = await getObject(this.s3, this.bucket, key);
    return found === null ? null : decodeCoverage(found.body, sink, this.where(key));
  }

  private coverageKey(sink: SinkId): string {
    return `${this.prefix}coverage/${sink}.json`;
  }

  private cursorKey(source: string): string {
    return `${this.prefix}cursors/${encodeURIComponent(source)}.json`;
  }

  private where(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }
}
