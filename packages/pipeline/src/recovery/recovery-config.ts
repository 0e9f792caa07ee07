import { z } from 'zod';

const positiveInt = z.number().int().positive();

/**
 * How recovery runs. `role` decides what the process does, same code either
 * way: `ingest` consumes the source and writes raw and the live secondaries;
 * `recovery` does not touch the source and replays raw into lagging
 * secondaries; `both` (default) does the two.
 */
export const recoveryConfigSchema = z
  .strictObject({
    role: z.enum(['ingest', 'recovery', 'both']).default('both'),
    /** The grid windows are cut on: at most this many offsets per window. */
    windowRecords: positiveInt.default(50_000),
    /** A window replays for at most this long; the rest stays a gap for the next pass. */
    windowMaxMs: positiveInt.default(60_000),
    /** How long a claimed window is held without renewal (several workers only). */
    leaseTtlMs: positiveInt.default(30_000),
    renewEveryMs: positiveInt.default(10_000),
    /** Pause between passes that found nothing to replay. */
    scanEveryMs: positiveInt.default(5_000),
    quarantine: z.enum(['rehydrate', 'skip-dlq']).default('rehydrate'),
    /**
     * In the `both` role, a gap that live ingest will read again (at or past
     * where it has got in a partition) is left to the live lane while the
     * partition moves; a partition live ingest has not moved in for this
     * long (paused, stalled) is recovery's again (ADR 0030).
     */
    liveGraceMs: positiveInt.default(30_000),
    /** Who this worker is in lease records (default: host and process id). */
    holder: z.string().min(1).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.renewEveryMs >= c.leaseTtlMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['renewEveryMs'],
        message: `must be below leaseTtlMs (${c.leaseTtlMs}): a lease renewed after it expired may already be another worker's`,
      });
    }
  });

export type RecoveryConfig = z.output<typeof recoveryConfigSchema>;
export type PipelineRole = RecoveryConfig['role'];
