import type pg from 'pg';
import type { S3ClientConfig, S3Client } from '@aws-sdk/client-s3';
import { functionOption, objectWith, parseConfig } from '@thalweg/connector-core';
import { z } from 'zod';
import { attempts, isPool, nonEmptyText, sqlSchemaName } from '../store-options.js';
import { MAX_LEASE_TTL_MS } from './lease-input.js';
import type { LeaseObjects } from './lease-objects.js';

/**
 * The options of the three lease stores, each parsed once when the store is
 * built or opened, under its root name (`inMemoryLeases`, `postgresLeases`,
 * `s3Leases`; ADR 0015).
 */

const millis = () => {
  const reason = `must be a whole number of milliseconds in [0, ${MAX_LEASE_TTL_MS}]`;
  return z
    .number({ error: reason })
    .int({ error: reason })
    .min(0, { error: reason })
    .max(MAX_LEASE_TTL_MS, { error: reason });
};

const clock = functionOption<() => number>();

const inMemoryLeasesSchema = z.strictObject(
  { now: clock.optional() },
  { error: 'must be an object { now? }' },
);

export function parseInMemoryLeaseOptions(input: unknown): { readonly now: () => number } {
  const o = parseConfig(inMemoryLeasesSchema, input, 'inMemoryLeases');
  return { now: o.now ?? Date.now };
}

const postgresLeasesSchema = z
  .strictObject(
    {
      pool: z.custom<pg.Pool>(isPool, 'must be a pg.Pool').optional(),
      connectionString: nonEmptyText('a non-empty connection string').optional(),
      schema: sqlSchemaName,
    },
    { error: 'must be an object { pool | connectionString, schema? }' },
  )
  .superRefine((o, ctx) => {
    if ((o.pool === undefined) === (o.connectionString === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [o.pool === undefined ? 'pool' : 'connectionString'],
        message: 'give exactly one of pool and connectionString',
      });
    }
  });

export interface PostgresLeaseSettings {
  /** Exactly one of the two is set. */
  readonly pool: pg.Pool | undefined;
  readonly connectionString: string | undefined;
  readonly schema: string;
}

export function parsePostgresLeaseOptions(input: unknown): PostgresLeaseSettings {
  const o = parseConfig(postgresLeasesSchema, input, 'postgresLeases');
  return { pool: o.pool, connectionString: o.connectionString, schema: o.schema };
}

const PREFIX_REASON = 'must be a string of at most 200 bytes without NUL';

const s3LeasesSchema = z
  .strictObject(
    {
      s3: z
        .custom<S3Client | S3ClientConfig>(
          (v) => typeof v === 'object' && v !== null,
          'must be an S3Client or an S3ClientConfig',
        )
        .optional(),
      bucket: nonEmptyText('a non-empty bucket name').optional(),
      objects: objectWith<LeaseObjects>('replace', 'a LeaseObjects').optional(),
      prefix: z
        .string({ error: PREFIX_REASON })
        .refine((p) => !p.includes('\u0000') && Buffer.byteLength(p) <= 200, PREFIX_REASON)
        .default(''),
      clockSkewMarginMs: millis().optional(),
      retry: z
        .strictObject(
          {
            maxAttempts: attempts().optional(),
            baseDelayMs: millis().optional(),
            maxDelayMs: millis().optional(),
          },
          { error: 'must be an object { maxAttempts?, baseDelayMs?, maxDelayMs? }' },
        )
        .optional(),
      now: clock.optional(),
    },
    { error: 'must be an object { s3, bucket } or { objects }, with prefix?, retry?, ...' },
  )
  .superRefine((o, ctx) => {
    if (o.objects !== undefined) {
      for (const field of ['s3', 'bucket'] as const) {
        if (o[field] !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: 'not used with objects (objects replaces s3 and bucket)',
          });
        }
      }
      return;
    }
    if (o.s3 === undefined) {
      ctx.addIssue({ code: 'custom', path: ['s3'], message: 'give s3 and bucket, or objects' });
    }
    if (o.bucket === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['bucket'],
        message: 'must be a non-empty bucket name',
      });
    }
  });

export type S3LeaseSettings = z.output<typeof s3LeasesSchema>;

export function parseS3LeaseOptions(input: unknown): S3LeaseSettings {
  return parseConfig(s3LeasesSchema, input, 's3Leases');
}
