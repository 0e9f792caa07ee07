import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { LeaseError } from './lease-errors.js';

/** One stored object and the ETag a conditional write must match. */
export interface StoredObject {
  readonly body: string;
  readonly etag: string;
}

/**
 * The seam between `S3LeaseStore` and object storage: conditional create,
 * replace and delete, where `false` means "the condition failed, someone
 * else wrote first" and a throw means "the outcome is unknown". Tests wrap
 * the real adapter to inject lost answers, lost races and failures.
 */
export interface LeaseObjects {
  get(objectKey: string): Promise<StoredObject | null>;
  /** Writes only if no object exists (`If-None-Match: *`). */
  create(objectKey: string, body: string): Promise<boolean>;
  /** Writes only over the version with this ETag (`If-Match`). */
  replace(objectKey: string, body: string, etag: string): Promise<boolean>;
  /** Deletes only the version with this ETag (`If-Match`). */
  remove(objectKey: string, etag: string): Promise<boolean>;
  /** Every object key starting with `prefix`. */
  list(prefix: string): Promise<string[]>;
  /** How an object is named in messages (`s3://bucket/key`). */
  where(objectKey: string): string;
  close(): Promise<void>;
}

/** `LeaseObjects` over an S3 bucket that honours conditional writes. */
export class S3LeaseObjects implements LeaseObjects {
  private readonly s3: S3Client;
  private readonly ownsClient: boolean;

  /** `s3`: a client the caller owns, or a configuration for one this adapter owns. */
  constructor(
    s3: S3Client | S3ClientConfig,
    private readonly bucket: string,
  ) {
    this.ownsClient = !(s3 instanceof S3Client);
    this.s3 = s3 instanceof S3Client ? s3 : new S3Client(s3);
  }

  async get(objectKey: string): Promise<StoredObject | null> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      const body = (await out.Body?.transformToString('utf8')) ?? '';
      if (out.ETag === undefined) throw new Error('the response carries no ETag');
      return { body, etag: out.ETag };
    } catch (e) {
      if (e instanceof NoSuchKey || (status(e) === 404 && !missingBucket(e))) return null;
      throw this.failed('reading', objectKey, e);
    }
  }

  async create(objectKey: string, body: string): Promise<boolean> {
    // A 404 here can only be a missing bucket: a failure, not a lost race.
    return this.put(objectKey, body, { IfNoneMatch: '*' }, [412, 409]);
  }

  async replace(objectKey: string, body: string, etag: string): Promise<boolean> {
    return this.put(objectKey, body, { IfMatch: etag }, LOST_IF_MATCH);
  }

  async remove(objectKey: string, etag: string): Promise<boolean> {
    try {
      await this.s3.send(
        new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey, IfMatch: etag }),
      );
      return true;
    } catch (e) {
      if (lostRace(e, LOST_IF_MATCH)) return false;
      throw this.failed('deleting', objectKey, e);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const out = await this.s3.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        );
        for (const o of out.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
        token = out.IsTruncated === true ? out.NextContinuationToken : undefined;
      } while (token !== undefined);
    } catch (e) {
      throw this.failed('listing', `${prefix}*`, e);
    }
    return keys;
  }

  where(objectKey: string): string {
    return `s3://${this.bucket}/${objectKey}`;
  }

  async close(): Promise<void> {
    if (this.ownsClient) this.s3.destroy();
  }

  private async put(
    objectKey: string,
    body: string,
    condition: { IfNoneMatch: string } | { IfMatch: string },
    lost: readonly number[],
  ): Promise<boolean> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: body,
          ContentType: 'application/json',
          ...condition,
        }),
      );
      return true;
    } catch (e) {
      if (lostRace(e, lost)) return false;
      throw this.failed('writing', objectKey, e);
    }
  }

  private failed(what: string, objectKey: string, cause: unknown): LeaseError {
    return new LeaseError(
      'TWG_LEASE_STORE_FAILED',
      `${what} ${this.where(objectKey)} failed`,
      cause,
    );
  }
}

function status(e: unknown): number | undefined {
  return e instanceof S3ServiceException ? e.$metadata.httpStatusCode : undefined;
}

/**
 * Answers to a conditional write that mean another writer changed the object
 * first. 412: the condition failed. 409: S3's answer to conditional writes
 * racing on one key. 404 (for `If-Match` only): the object was deleted
 * meanwhile — unless it is the bucket that is missing.
 */
const LOST_IF_MATCH = [412, 409, 404] as const;

function lostRace(e: unknown, lost: readonly number[]): boolean {
  const s = status(e);
  return s !== undefined && lost.includes(s) && !missingBucket(e);
}

function missingBucket(e: unknown): boolean {
  return e instanceof S3ServiceException && e.name === 'NoSuchBucket';
}
