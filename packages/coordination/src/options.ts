import { ConfigError, objectWith, parseConfig } from '@thalweg/connector-core';
import type { LeaseStore } from '@thalweg/offset-store';
import { z } from 'zod';
import type { BackupStore } from './backup-store.js';
import type { CoordinationMode } from './coordination.js';
import type { Scheduler } from './scheduler.js';

/**
 * The options of `coordination()`, parsed once under the root name
 * `coordination` (ADR 0015). The mode is checked first and alone, so that
 * a refused size says why before anything else is looked at.
 */

/** Why each refused size is refused: the reasons of ADR 0035, in the error itself. */
export function modeRefusal(mode: unknown): string | null {
  if (mode === 0 || mode === 1 || mode === 3 || mode === 5 || mode === 7) return null;
  if (mode === 2) {
    return (
      'a cluster of 2 is refused: its quorum is 2, so losing either node halts every write; ' +
      'that is strictly worse than mode 1, which keeps serving alone, and it still pays for replication'
    );
  }
  if (typeof mode === 'number' && Number.isSafeInteger(mode) && mode > 0 && mode % 2 === 0) {
    const tolerated = mode / 2 - 1;
    return (
      `a cluster of ${mode} is refused: its quorum is ${mode / 2 + 1}, so it tolerates ${tolerated} ` +
      `failure${tolerated === 1 ? '' : 's'}, no more than a cluster of ${mode - 1} does (quorum ${mode / 2}), ` +
      'while every write waits for one more voter; use an odd size'
    );
  }
  return `${String(mode)} is not a mode: use 0 (off), 1 (single node), or 3, 5 or 7 (an etcd cluster of that size)`;
}

const positiveMs = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(1, { error: `must be ${what}` })
    .max(86_400_000, { error: `must be ${what}` });

const scheduler = objectWith<Scheduler>('every', 'a Scheduler { every(ms, task) }');
const clock = z.custom<() => number>((v) => typeof v === 'function', 'must be a function');

const offSchema = z.strictObject({
  mode: z.literal(0),
  leases: objectWith<LeaseStore>('claim', 'a LeaseStore of @thalweg/offset-store').optional(),
  observeIntervalMs: positiveMs('a whole number of milliseconds in [1, 86400000]').default(1000),
  scheduler: scheduler.optional(),
});

const s3BackupSchema = z.strictObject(
  {
    s3: z.custom<object>(
      (v) => typeof v === 'object' && v !== null,
      'must be an S3Client or an S3ClientConfig',
    ),
    bucket: z.string().min(1, { error: 'must be a non-empty bucket name' }),
    key: z
      .string()
      .min(1, { error: 'must be a non-empty object key' })
      .default('thalweg/coordination-backup.json'),
  },
  { error: 'must be { s3, bucket, key? } or { store }' },
);

const storeBackupSchema = z.strictObject({
  store: objectWith<BackupStore>('write', 'a BackupStore { read(), write(body, etag) }'),
});

const singleSchema = z.strictObject({
  mode: z.literal(1),
  backup: z.union([storeBackupSchema, s3BackupSchema], {
    error: 'must be { s3, bucket, key? } (the object the state is backed up to) or { store }',
  }),
  /** Losing the node costs at most this much of leases, members and the expiring sets. */
  backupIntervalMs: positiveMs('a whole number of milliseconds in [1, 86400000]').default(60_000),
  /** How often expiry is swept, membership kept alive and leaders observed. */
  tickMs: positiveMs('a whole number of milliseconds in [1, 86400000]').default(1000),
  now: clock.optional(),
  scheduler: scheduler.optional(),
});

const clusterSchema = z.strictObject({
  mode: z.union([z.literal(3), z.literal(5), z.literal(7)]),
  endpoints: z
    .array(z.url({ protocol: /^https?$/, error: 'must be an http(s):// URL' }), {
      error: 'must be a list of etcd client URLs',
    })
    .min(1, { error: 'must name at least one etcd client URL' }),
  /** Every key this coordination writes starts with it, so several deployments share a cluster. */
  namespace: z.string().default('thalweg/'),
  healthIntervalMs: positiveMs('a whole number of milliseconds in [1, 86400000]').default(1000),
  /** The deadline of one call to etcd; an unanswered call is TWG_COORDINATION_UNAVAILABLE. */
  callTimeoutMs: positiveMs('a whole number of milliseconds in [1, 86400000]').default(5000),
  scheduler: scheduler.optional(),
});

export type OffOptions = z.output<typeof offSchema>;
export type SingleNodeOptions = z.output<typeof singleSchema>;
export type ClusterOptions = z.output<typeof clusterSchema>;
export type CoordinationSettings = OffOptions | SingleNodeOptions | ClusterOptions;

/** What a caller passes; `mode` decides which other fields apply. */
export type CoordinationOptions =
  z.input<typeof offSchema> | z.input<typeof singleSchema> | z.input<typeof clusterSchema>;

export function parseCoordinationOptions(input: unknown): CoordinationSettings {
  if (typeof input !== 'object' || input === null) {
    throw new ConfigError('coordination', 'must be an object { mode, ... }');
  }
  const mode: unknown = (input as { mode?: unknown }).mode;
  const refusal = modeRefusal(mode);
  if (refusal !== null) throw new ConfigError('coordination.mode', refusal);
  const m = mode as CoordinationMode;
  if (m === 0) return parseConfig(offSchema, input, 'coordination');
  if (m === 1) return parseConfig(singleSchema, input, 'coordination');
  return parseConfig(clusterSchema, input, 'coordination');
}
