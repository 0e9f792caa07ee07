import type { ResourceLimits } from 'node:worker_threads';

/**
 * The young generation each of thalweg's worker threads may grow to (raw's
 * writer thread, the derivation and hash threads): 48 MB, a new space of
 * 32 MB as Node 20 gives by default. Under allocation pressure V8 grows the
 * new space up to its own bound, 32 MB per isolate on Node 20 but 128 MB on
 * Node 24, and keeps it while the thread runs. On Node 24 the full
 * topology's RSS fell by 70-100 MB with this bound, at the same throughput;
 * that memory lies outside the byte budget (flow control reads the main
 * isolate only). The main thread's new space is the application's to
 * bound: `--max-semi-space-size=16` holds it at 32 MB.
 */
export const WORKER_RESOURCE_LIMITS: ResourceLimits = Object.freeze({
  maxYoungGenerationSizeMb: 48,
});
