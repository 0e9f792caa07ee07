import { resolve } from 'node:path';
import {
  ConfigError,
  RecordIdHasher,
  isSinkId,
  type ConfirmTarget,
  type OffsetSpan,
  type SinkId,
} from '@thalweg/connector-core';
import type { RetryPolicy } from './backoff.js';
import { reasonOf } from './errors.js';
import { nodeSegmentFs, type SegmentFs } from './segment-fs.js';

const MiB = 1024 * 1024;
/** Idle packed-batch buffers kept for reuse at most (buffer-pool.ts), unless the queue bound is lower. */
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

export interface RawSegmentSinkOptions {
  readonly id: SinkId;
  /** The directory segments live in; created when missing. One sink instance per directory. */
  readonly dir: string;
  /**
   * The source cluster, recorded in every segment: record ids (ADR 0003) of
   * what raw holds are computed with it, and a directory holds one cluster.
   */
  readonly cluster: string;
  /** Where confirmations go, in submission order, after the durable write. */
  readonly confirm: ConfirmTarget<'primary-raw'>;
  /** A segment closes before passing this many bytes of batch buffers (one batch alone may). Default 64 MiB. */
  readonly maxSegmentBytes?: number;
  /** Source batches per segment at most. Default 1024. */
  readonly maxBatchesPerSegment?: number;
  /** Batches queued before submit waits (the backpressure). Default 2048. */
  readonly maxQueuedBatches?: number;
  /** Bytes of batch buffers queued before submit waits. Default 128 MiB. */
  readonly maxQueuedBytes?: number;
  /** Records per batch yielded by `read`. Default 4096. */
  readonly readChunkRecords?: number;
  /** Default `worker`. See RawWriterMode. */
  readonly writer?: RawWriterMode;
  /**
   * The file system seam; the real one by default. An injected one requires
   * `writer: 'inline'`: functions cannot cross into the writer thread.
   */
  readonly fs?: SegmentFs;
  /** Retries of a failed segment write. Default 5 attempts from 10 ms, capped at 1 s. */
  readonly retry?: {
    readonly attempts?: number;
    readonly baseDelayMs?: number;
    readonly maxDelayMs?: number;
  };
  /** Confirmation-target failures, retried writes, the failure that ended the sink. */
  readonly onError?: (event: RawSinkEvent) => void;
  /** Start-up log: one line per setting. Default console.info. */
  readonly log?: (line: string) => void;
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

const KNOWN = new Set([
  'id',
  'dir',
  'cluster',
  'confirm',
  'maxSegmentBytes',
  'maxBatchesPerSegment',
  'maxQueuedBatches',
  'maxQueuedBytes',
  'readChunkRecords',
  'writer',
  'fs',
  'retry',
  'onError',
  'log',
]);
const FS_METHODS = ['ensureDir', 'list', 'readFile', 'create', 'rename', 'syncDir', 'remove'];
// Node timers overflow above 2^31 - 1 ms (they fire after 1 ms instead).
const MAX_DELAY = 0x7fffffff;

/**
 * Validates the options once, at the edge, by hand (this package does not
 * depend on zod). A refusal is a ConfigError naming the field path and why;
 * an unknown key is refused, so a misspelt knob is not silently ignored.
 */
export function resolveOptions(
  input: RawSegmentSinkOptions,
  path = 'rawSegments',
): ResolvedOptions {
  const at = (field: string) => `${path}.${field}`;
  if (typeof input !== 'object' || (input as unknown) === null) {
    throw new ConfigError(path, 'options must be an object');
  }
  for (const key of Object.keys(input)) {
    if (!KNOWN.has(key)) throw new ConfigError(at(key), 'is not an option of the raw segment sink');
  }
  if (!isSinkId(input.id)) {
    throw new ConfigError(at('id'), `${JSON.stringify(input.id)} is not a sink id (use sinkId())`);
  }
  if (typeof input.dir !== 'string' || input.dir.length === 0) {
    throw new ConfigError(at('dir'), 'must be a non-empty path');
  }
  if (typeof input.cluster !== 'string') throw new ConfigError(at('cluster'), 'must be a string');
  try {
    // Record ids of what raw holds are computed with this cluster: refuse now
    // a name the id cannot hash unambiguously, not at the first derivation.
    new RecordIdHasher(input.cluster, 'check', 0);
  } catch (cause) {
    throw new ConfigError(at('cluster'), reasonOf(cause));
  }
  if (
    typeof (input.confirm as Partial<ConfirmTarget<'primary-raw'>> | undefined)?.apply !==
    'function'
  ) {
    throw new ConfigError(at('confirm'), 'must be a ConfirmTarget with an apply method');
  }
  const writer: unknown = input.writer ?? 'worker';
  if (writer !== 'worker' && writer !== 'inline') {
    throw new ConfigError(at('writer'), `${show(writer)} is not 'worker' or 'inline'`);
  }
  const fs = input.fs ?? nodeSegmentFs;
  for (const method of FS_METHODS) {
    if (typeof (fs as unknown as Record<string, unknown>)[method] !== 'function') {
      throw new ConfigError(at(`fs.${method}`), 'must be a function (see SegmentFs)');
    }
  }
  if (writer === 'worker' && fs !== nodeSegmentFs) {
    throw new ConfigError(
      at('fs'),
      "an injected file system needs writer: 'inline' (the worker thread writes through " +
        'node:fs; functions cannot cross a thread boundary)',
    );
  }
  for (const hook of ['onError', 'log'] as const) {
    if (input[hook] !== undefined && typeof input[hook] !== 'function') {
      throw new ConfigError(at(hook), 'must be a function');
    }
  }
  const retry: unknown = input.retry ?? {};
  if (typeof retry !== 'object' || retry === null) {
    throw new ConfigError(at('retry'), 'must be an object');
  }
  for (const key of Object.keys(retry)) {
    if (!['attempts', 'baseDelayMs', 'maxDelayMs'].includes(key)) {
      throw new ConfigError(at(`retry.${key}`), 'is not a retry option');
    }
  }
  const r = retry as NonNullable<RawSegmentSinkOptions['retry']>;
  const maxSegmentBytes = integer(
    input.maxSegmentBytes,
    64 * MiB,
    1024,
    1024 * MiB,
    at('maxSegmentBytes'),
  );
  return {
    id: input.id,
    // Absolute and normalised: error messages name files by this path.
    dir: resolve(input.dir),
    cluster: input.cluster,
    confirm: input.confirm,
    maxSegmentBytes,
    maxBatchesPerSegment: integer(
      input.maxBatchesPerSegment,
      1024,
      1,
      1_000_000,
      at('maxBatchesPerSegment'),
    ),
    maxQueuedBatches: integer(input.maxQueuedBatches, 2048, 1, 10_000_000, at('maxQueuedBatches')),
    maxQueuedBytes: integer(
      input.maxQueuedBytes,
      128 * MiB,
      1,
      Number.MAX_SAFE_INTEGER,
      at('maxQueuedBytes'),
    ),
    readChunkRecords: integer(input.readChunkRecords, 4096, 1, 1_000_000, at('readChunkRecords')),
    writer,
    fs,
    retry: {
      attempts: integer(r.attempts, 5, 1, 1000, at('retry.attempts')),
      baseDelayMs: integer(r.baseDelayMs, 10, 0, MAX_DELAY, at('retry.baseDelayMs')),
      maxDelayMs: integer(r.maxDelayMs, 1000, 0, MAX_DELAY, at('retry.maxDelayMs')),
    },
    onError: input.onError ?? (() => undefined),
    log: input.log ?? ((line: string) => console.info(line)),
  };
}

function integer(value: unknown, fallback: number, min: number, max: number, path: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(path, `${show(value)} is not an integer in [${min}, ${max}]`);
  }
  return value;
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
    `retry.attempts=${o.retry.attempts}`,
    `retry.baseDelayMs=${o.retry.baseDelayMs}`,
    `retry.maxDelayMs=${o.retry.maxDelayMs}`,
    `fs=${o.fs === nodeSegmentFs ? 'node' : 'injected'}`,
  ];
}

function show(value: unknown): string {
  if (typeof value === 'number') return String(value);
  // JSON.stringify returns undefined for undefined and functions, whatever its type says.
  const json = JSON.stringify(value) as string | undefined;
  return json ?? typeof value;
}
