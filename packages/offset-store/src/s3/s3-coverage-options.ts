import { S3Client } from '@aws-sdk/client-s3';
import { parseConfig, type SinkId } from '@thalweg/connector-core';
import { z } from 'zod';
import { attempts, intIn, MAX_TIMER_MS, nonEmptyText, sinkList } from '../store-options.js';
import type { RetryPolicy } from '@thalweg/connector-core';
import { DEFAULT_RETRY } from './conditional-object.js';

export interface S3CoverageSettings {
  /** The client, and whether this store made it (and so destroys it on close). */
  readonly s3: S3Client;
  readonly ownsClient: boolean;
  readonly bucket: string;
  readonly prefix: string;
  readonly sinks: readonly SinkId[];
  readonly retry: RetryPolicy;
}

const s3CoverageSchema = z.strictObject(
  {
    // An S3ClientConfig is the SDK's to check; here only that it is an object.
    s3: z.custom<S3Client | object>(
      (v) => typeof v === 'object' && v !== null,
      'must be an S3Client or an S3ClientConfig',
    ),
    bucket: nonEmptyText('a non-empty bucket name'),
    prefix: z.string({ error: 'must be a string (a key prefix)' }).default(''),
    sinks: sinkList,
    retry: z
      .strictObject(
        {
          maxAttempts: attempts().default(DEFAULT_RETRY.maxAttempts),
          baseDelayMs: intIn(0, MAX_TIMER_MS).default(DEFAULT_RETRY.baseDelayMs),
          maxDelayMs: intIn(0, MAX_TIMER_MS).default(DEFAULT_RETRY.maxDelayMs),
        },
        { error: 'must be an object { maxAttempts?, baseDelayMs?, maxDelayMs? }' },
      )
      .prefault({}),
  },
  { error: 'must be an object { s3, bucket, prefix?, sinks, retry? }' },
);

/** Validates the options of `new S3Coverage`; a refusal names `s3Coverage.<field>`. */
export function parseS3CoverageOptions(input: unknown): S3CoverageSettings {
  const o = parseConfig(s3CoverageSchema, input, 's3Coverage');
  const owns = !(o.s3 instanceof S3Client);
  return {
    s3: o.s3 instanceof S3Client ? o.s3 : new S3Client(o.s3),
    ownsClient: owns,
    bucket: o.bucket,
    prefix: o.prefix,
    sinks: o.sinks,
    retry: o.retry,
  };
}
