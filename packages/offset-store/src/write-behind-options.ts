import { functionOption, objectWith, parseConfig } from '@thalweg/connector-core';
import { z } from 'zod';
import type { CoverageTier } from './coverage-store.js';
import type { LevelDbCoverage } from './leveldb/leveldb-coverage.js';
import { MAX_TIMER_MS } from './store-options.js';
import type { WriteBehindOptions } from './write-behind-coverage.js';

/**
 * A LevelDbCoverage, recognised by the methods only a local tier has: this
 * module is in the package's root export, which must not load classic-level
 * (ADR 0027), so it cannot import the class to test `instanceof`.
 */
function isLocalTier(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return ['serveAsLocalTier', 'unflushed', 'markCheckpointed', 'diagnostics'].every(
    (m) => typeof o[m] === 'function',
  );
}

const interval = 'must be a positive number of milliseconds up to 2147483647';

const writeBehindCoverageSchema = z.strictObject(
  {
    local: z.custom<LevelDbCoverage>(
      isLocalTier,
      'must be a LevelDbCoverage (from LevelDbCoverage.open)',
    ),
    durable: objectWith<CoverageTier>('merge', 'a CoverageTier (a durable coverage store)'),
    // Node fires timers above 2^31 - 1 ms after 1 ms: refuse rather than checkpoint in a loop.
    checkpointIntervalMs: z
      .number({ error: interval })
      .gt(0, { error: interval })
      .max(MAX_TIMER_MS, { error: interval }),
    now: functionOption<() => number>().optional(),
    onCheckpointError: functionOption<(error: unknown) => void>().optional(),
  },
  { error: 'must be an object { local, durable, checkpointIntervalMs, ... }' },
);

/** Validates the options of `new WriteBehindCoverage`; a refusal names `writeBehindCoverage.<field>`. */
export function parseWriteBehindOptions(input: unknown): WriteBehindOptions {
  const o = parseConfig(writeBehindCoverageSchema, input, 'writeBehindCoverage');
  return {
    local: o.local,
    durable: o.durable,
    checkpointIntervalMs: o.checkpointIntervalMs,
    ...(o.now === undefined ? {} : { now: o.now }),
    ...(o.onCheckpointError === undefined ? {} : { onCheckpointError: o.onCheckpointError }),
  };
}
