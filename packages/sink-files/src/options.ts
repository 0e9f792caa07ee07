import { resolve } from 'node:path';
import {
  functionOption,
  objectWith,
  parseConfig,
  RecordIdHasher,
  isSinkId,
  type ConfirmTarget,
  type OffsetSpan,
  type RetryPolicy,
  type SinkId,
} from '@thalweg/connector-core';
import { z } from 'zod';
import { reasonOf } from './errors.js';
import { nodeSegmentFs, type SegmentFs } from './segment-fs.js';

const MiB = 1024 * 1024;
/**
 * The queue bound of a sink opened with no `maxQueuedBytes`. Declared as a
 * topology part, raw takes an eighth of the topology's memory limit, at
 * most this (raw-segments-part.ts).
 */
export const DEFAULT_QUEUED_BYTES = 128 * MiB;
/** Idle packed-batch buffers kept for reuse at most (connector-core's BufferPool), unless the queue bound is lower. */
const MAX_POOLED_BYTES = 64 * MiB;

/** The bytes of idle buffers a sink keeps for packing. */
export function pooledBytes(o: ResolvedOptions): number {
  return Math.min(o.maxQueuedBytes, MAX_POOLED_BYTES);
}

/**
 * What the sink reports that is not an exception of a call: a confirmation
 * target that threw (the batch IS durable; the position lags until the
 * pipeline retries), a segment write that will be retried, and the failure
 * that ended the sink.
 */
export type RawSinkEvent =
  | { readonly kind: 'confirm-failed'; readonly span: OffsetSpan; readonly error: unknown }
  | {
      readonly kind: 'write-retry';
      readonly file: string;
      readonly attempt: number;
      readonly error: unknown;
    }
  | { readonly kind: 'failed'; readonly error: Error };

/**
 * Where segments are encoded and written:
 * - `worker` (default): a worker thread; `submit` only checks and packs.
 * - `inline`: the calling thread, through `fs` (the seam tests inject faults into).
 */
export type RawWriterMode = 'inline' | 'worker';

/**
 * The options of `RawSegmentSink.open`, validated once at open (a refusal
 * names the path, such as `rawSegments.retry.maxAttempts`).
 */
export interface RawSegmentSinkOptions {
  /** The sink's id. */
  id: SinkId;
  /** The directory segments live in; created when missing. One sink instance per directory. */
  dir: string;
  /**
   * The source cluster, recorded in every segment: record ids (ADR 0003) of
   * what raw holds are computed with it, and a directory holds one cluster.
   */
  cluster: string;
  /** Where confirmations go, in submission order, after the durable write. */
  confirm: ConfirmTarget<'primary-raw'>;
  /**
   * A segment closes before passing this many bytes of batch buffers (one
   * batch alone may). From 1024 to 1 GiB.
   * @defaultValue 67108864 (64 MiB)
   */
  maxSegmentBytes?: number | undefined;
  /**
   * Source batches per segment at most: under load, one fsync confirms this
   * many.
   * @defaultValue 1024
   */
  maxBatchesPerSegment?: number | undefined;
  /**
   * Batches queued before submit waits (the backpressure).
   * @defaultValue 2048
   */
  maxQueuedBatches?: number | undefined;
  /**
   * Bytes of batch buffers queued before submit waits.
   * @defaultValue 134217728 (128 MiB)
   */
  maxQueuedBytes?: number | undefined;
  /**
   * Records per batch yielded by `read`.
   * @defaultValue 4096
   */
  readChunkRecords?: number | undefined;
  /**
   * Where segments are encoded and written: `worker`, a worker thread
   * (`submit` only checks and packs); `inline`, the calling thread, through
   * `fs`.
   * @defaultValue 'worker'
   */
  writer?: RawWriterMode | undefined;
  /**
   * The file system seam (tests inject faults through it). An injected one
   * requires `writer: 'inline'`: functions cannot cross into the writer
   * thread.
   * @defaultValue `nodeSegmentFs`, node:fs
   */
  fs?: SegmentFs | undefined;
  /** Retries of a failed segment write, with exponential backoff. */
  retry?: RawSegmentRetryInput | undefined;
  /**
   * Confirmation-target failures, retried writes, the failure that ended the sink.
   * @defaultValue `() => undefined`, ignored
   */
  onError?: ((event: RawSinkEvent) => void) | undefined;
  /**
   * Start-up log: one line per setting (the effective settings, for a debug
   * log).
   * @defaultValue `() => undefined`, silent
   */
  log?: ((line: string) => void) | undefined;
}

/** How a failed segment write is retried. */
export interface RawSegmentRetryInput {
  /**
   * Attempts in all, the first included (1 to 1000).
   * @defaultValue 5
   */
  maxAttempts?: number | undefined;
  /**
   * The longest wait before the first retry, in ms; it doubles with each
   * failed attempt (full jitter: the wait is random below it).
   * @defaultValue 10
   */
  baseDelayMs?: number | undefined;
  /**
   * The cap on that doubling, in ms.
   * @defaultValue 1000
   */
  maxDelayMs?: number | undefined;
}

export interface ResolvedOptions {
  readonly id: SinkId;
  readonly dir: string;
  readonly cluster: string;
  readonly confirm: ConfirmTarget<'primary-raw'>;
  readonly maxSegmentBytes: number;
  readonly maxBatchesPerSegment: number;
  readonly maxQueuedBatches: number;
  readonly maxQueuedBytes: number;
  readonly readChunkRecords: number;
  readonly writer: RawWriterMode;
  readonly fs: SegmentFs;
  readonly retry: RetryPolicy;
  readonly onError: (event: RawSinkEvent) => void;
  readonly log: (line: string) => void;
}

// Every method of SegmentFs, checked by the compiler: a method added to the
// seam cannot be left out of the check below.
const FS_METHOD_SET: Record<keyof SegmentFs, true> = {
  ensureDir: true,
  list: true,
  readFile: true,
  size: true,
  create: true,
  append: true,
  truncate: true,
  rename: true,
  syncDir: true,
  remove: true,
};
const FS_METHODS = Object.keys(FS_METHOD_SET) as (keyof SegmentFs)[];
// Node timers overflow above 2^31 - 1 ms (they fire after 1 ms instead).
const MAX_DELAY = 0x7fffffff;

const int = (min: number, max: number, fallback: number) =>
  z.number().int().min(min).max(max).default(fallback);
/**
 * The validator of {@link RawSegmentSinkOptions} (each key's meaning and
 * default are documented there; a type test proves the two agree): strict,
 * so a misspelt knob (such as `waitPerBatch`) is refused rather than left at
 * its default; a refusal names the path, `rawSegments.retry.maxAttempts`.
 */
export const rawSegmentSinkOptionsSchema = z
  .strictObject({
    id: z.custom<SinkId>(isSinkId, 'is not a sink id (use sinkId())'),
    dir: z.string().min(1, 'must be a non-empty path'),
    cluster: z.string(),
    confirm: objectWith<ConfirmTarget<'primary-raw'>>(
      'apply',
      'a ConfirmTarget with an apply method',
    ),
    maxSegmentBytes: int(1024, 1024 * MiB, 64 * MiB),
    maxBatchesPerSegment: int(1, 1_000_000, 1024),
    maxQueuedBatches: int(1, 10_000_000, 2048),
    maxQueuedBytes: int(1, Number.MAX_SAFE_INTEGER, DEFAULT_QUEUED_BYTES),
    readChunkRecords: int(1, 1_000_000, 4096),
    writer: z.enum(['worker', 'inline']).default('worker'),
    fs: z
      .custom<SegmentFs>((v) => typeof v === 'object' && v !== null, 'must be a SegmentFs')
      .optional(),
    retry: z
      .strictObject({
        maxAttempts: int(1, 1000, 5),
        baseDelayMs: int(0, MAX_DELAY, 10),
        maxDelayMs: int(0, MAX_DELAY, 1000),
      })
      .prefault({}),
    onError: functionOption<(event: RawSinkEvent) => void>().optional(),
    log: functionOption<(line: string) => void>().optional(),
  })
  .superRefine((o, ctx) => {
    try {
      // Record ids of what raw holds are computed with this cluster: refuse now
      // a name the id cannot hash unambiguously, not at the first derivation.
      new RecordIdHasher(o.cluster, 'check', 0);
    } catch (cause) {
      ctx.addIssue({ code: 'custom', path: ['cluster'], message: reasonOf(cause) });
    }
    const fs = o.fs;
    if (fs === undefined || fs === nodeSegmentFs) return;
    for (const method of FS_METHODS) {
      if (typeof (fs as unknown as Record<string, unknown>)[method] !== 'function') {
        ctx.addIssue({
          code: 'custom',
          path: ['fs', method],
          message: 'must be a function (see SegmentFs)',
        });
        return;
      }
    }
    if (o.writer === 'worker') {
      ctx.addIssue({
        code: 'custom',
        path: ['fs'],
        message:
          "an injected file system needs writer: 'inline' (the worker thread writes through " +
          'node:fs; functions cannot cross a thread boundary)',
      });
    }
  });

/** Validates the options once, at the edge; a refusal is a ConfigError naming the field path. */
export function resolveOptions(
  input: RawSegmentSinkOptions,
  path = 'rawSegments',
): ResolvedOptions {
  const o = parseConfig(rawSegmentSinkOptionsSchema, input, path);
  return {
    ...o,
    // Absolute and normalised: error messages name files by this path.
    dir: resolve(o.dir),
    fs: o.fs ?? nodeSegmentFs,
    onError: o.onError ?? (() => undefined),
    log: o.log ?? (() => undefined),
  };
}

/** One line per setting, for the start-up log. */
export function describeOptions(o: ResolvedOptions): string[] {
  return [
    `dir=${o.dir}`,
    `cluster=${o.cluster}`,
    `writer=${o.writer}`,
    `maxSegmentBytes=${o.maxSegmentBytes}`,
    `maxBatchesPerSegment=${o.maxBatchesPerSegment}`,
    `maxQueuedBatches=${o.maxQueuedBatches}`,
    `maxQueuedBytes=${o.maxQueuedBytes}`,
    `readChunkRecords=${o.readChunkRecords}`,
    `retry.maxAttempts=${o.retry.maxAttempts}`,
    `retry.baseDelayMs=${o.retry.baseDelayMs}`,
    `retry.maxDelayMs=${o.retry.maxDelayMs}`,
    `fs=${o.fs === nodeSegmentFs ? 'node' : 'injected'}`,
  ];
}
