import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** How recovery runs: what the process does, and how it replays gaps from raw. */
export interface RecoveryConfigInput {
  /**
   * What the process does, same code either way: `ingest` consumes the
   * source and writes raw and the live secondaries; `recovery` does not touch
   * the source and replays raw into lagging secondaries; `both` does the two.
   * @defaultValue 'both'
   */
  role?: 'ingest' | 'recovery' | 'both' | undefined;
  /**
   * The grid windows are cut on: at most this many offsets per window.
   * @defaultValue 50000
   */
  windowRecords?: number | undefined;
  /**
   * A window replays for at most this long, in ms; the rest stays a gap for
   * the next pass.
   * @defaultValue 60000
   */
  windowMaxMs?: number | undefined;
  /**
   * How long a claimed window is held without renewal, in ms (several
   * workers only).
   * @defaultValue 30000
   */
  leaseTtlMs?: number | undefined;
  /**
   * How often a held lease is renewed, in ms. Must be below `leaseTtlMs`: a
   * lease renewed after it expired may already be another worker's.
   * @defaultValue 10000
   */
  renewEveryMs?: number | undefined;
  /**
   * Pause between passes that found nothing to replay, in ms.
   * @defaultValue 5000
   */
  scanEveryMs?: number | undefined;
  /**
   * What a replay does with records the derivation refuses: `rehydrate`
   * sends them to quarantine again, so the quarantine holds them even if the
   * first attempt never reached it; `skip-dlq` replays clean data only and
   * reports that the window's quarantine view is incomplete.
   * @defaultValue 'rehydrate'
   */
  quarantine?: 'rehydrate' | 'skip-dlq' | undefined;
  /**
   * In the `both` role, a gap that live ingest will read again (at or past
   * where it has got in a partition) is left to the live lane while the
   * partition moves; a partition live ingest has not moved in for this long
   * (paused, stalled), in ms, is recovery's again (ADR 0030).
   * @defaultValue 30000
   */
  liveGraceMs?: number | undefined;
  /**
   * Who this worker is in lease records.
   * @defaultValue `${hostname()}:${process.pid}`
   */
  holder?: string | undefined;
}

/**
 * The validator of {@link RecoveryConfigInput}; each key's meaning and default
 * are documented there (a type test proves the two agree).
 */
export const recoveryConfigSchema = z
  .strictObject({
    role: z.enum(['ingest', 'recovery', 'both']).default('both'),
    windowRecords: positiveInt.default(50_000),
    windowMaxMs: positiveInt.default(60_000),
    leaseTtlMs: positiveInt.default(30_000),
    renewEveryMs: positiveInt.default(10_000),
    scanEveryMs: positiveInt.default(5_000),
    quarantine: z.enum(['rehydrate', 'skip-dlq']).default('rehydrate'),
    liveGraceMs: positiveInt.default(30_000),
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
