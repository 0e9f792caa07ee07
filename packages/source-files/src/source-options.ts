import { basename, resolve } from 'node:path';
import { ConfigError } from '@thalweg/connector-core';
import { nodeFileAccess, type FileAccess } from './file-access.js';
import type { FileSetSpec } from './file-set.js';

/**
 * Options of a `FileSetSource`. The format decides what a record is:
 *
 * - `ndjson`: one record per line, the line's bytes without its `\n` (or
 *   `\r\n`); timestamp = the file's modification time in ms.
 * - `arrow-ipc`: one record per row, the row as a JSON object (see
 *   `row-json.ts` for the type mapping); timestamp = the file's modification
 *   time, or `timestampColumn` (a timestamp or date32 column) where not null.
 */
export type FileSetSourceOptions = CommonOptions &
  (
    | { readonly format: 'ndjson' }
    | { readonly format: 'arrow-ipc'; readonly timestampColumn?: string }
  );

interface CommonOptions {
  readonly files: FileSetSpec;
  /** The partition's topic; default: the directory's name. Required with `paths`. */
  readonly topic?: string;
  /** Hashed into every record id: keep it stable for the life of the data. Default `file-set`. */
  readonly cluster?: string;
  /** Default 1000. */
  readonly maxBatchRecords?: number;
  /** Sum of record value bytes per batch; a batch closes at or above it. Default 1 MiB. */
  readonly maxBatchBytes?: number;
  /** A record above this is yielded alone in its own batch and counted as oversized. Default 1 MiB. */
  readonly maxRecordBytes?: number;
  /**
   * The most a reader holds at once: the longest NDJSON line plus a read
   * chunk, or one Arrow IPC message plus its schema. A line or message beyond
   * it fails with its file and position rather than exhaust memory. Default 64 MiB.
   */
  readonly maxBufferBytes?: number;
  /** Bytes per NDJSON read. Default 64 KiB. */
  readonly readChunkBytes?: number;
  /** The file system seam; default `node:fs/promises`. */
  readonly access?: FileAccess;
}

export interface ResolvedOptions {
  readonly files: FileSetSpec;
  readonly format: 'ndjson' | 'arrow-ipc';
  readonly timestampColumn: string | undefined;
  readonly topic: string;
  readonly cluster: string;
  readonly maxBatchRecords: number;
  readonly maxBatchBytes: number;
  readonly maxRecordBytes: number;
  readonly maxBufferBytes: number;
  readonly readChunkBytes: number;
  readonly access: FileAccess;
}

export const DEFAULTS = {
  cluster: 'file-set',
  maxBatchRecords: 1000,
  maxBatchBytes: 1024 * 1024,
  maxRecordBytes: 1024 * 1024,
  maxBufferBytes: 64 * 1024 * 1024,
  readChunkBytes: 64 * 1024,
} as const;

/** Validated once, at the edge; a refusal names the option's path. */
export function resolveOptions(options: FileSetSourceOptions): ResolvedOptions {
  const files = checkSpec(options.files);
  const format = options.format as string;
  if (format !== 'ndjson' && format !== 'arrow-ipc') {
    throw new ConfigError('format', `${JSON.stringify(format)} is not "ndjson" or "arrow-ipc"`);
  }
  const timestampColumn = options.format === 'arrow-ipc' ? options.timestampColumn : undefined;
  if (timestampColumn?.length === 0) {
    throw new ConfigError('timestampColumn', 'must not be empty');
  }
  const topic =
    options.topic ?? (files.kind === 'directory' ? basename(resolve(files.directory)) : '');
  if (topic.length === 0) {
    throw new ConfigError('topic', 'must be set (a set of paths has no directory to name it)');
  }
  const cluster = options.cluster ?? DEFAULTS.cluster;
  if (cluster.length === 0) throw new ConfigError('cluster', 'must not be empty');
  const resolved: ResolvedOptions = {
    files,
    format: options.format,
    timestampColumn,
    topic,
    cluster,
    maxBatchRecords: positive(options.maxBatchRecords, 'maxBatchRecords', DEFAULTS.maxBatchRecords),
    maxBatchBytes: positive(options.maxBatchBytes, 'maxBatchBytes', DEFAULTS.maxBatchBytes),
    maxRecordBytes: positive(options.maxRecordBytes, 'maxRecordBytes', DEFAULTS.maxRecordBytes),
    maxBufferBytes: positive(options.maxBufferBytes, 'maxBufferBytes', DEFAULTS.maxBufferBytes),
    readChunkBytes: positive(options.readChunkBytes, 'readChunkBytes', DEFAULTS.readChunkBytes),
    access: options.access ?? nodeFileAccess,
  };
  if (resolved.maxBufferBytes < resolved.readChunkBytes) {
    throw new ConfigError(
      'maxBufferBytes',
      `${resolved.maxBufferBytes} is below readChunkBytes (${resolved.readChunkBytes})`,
    );
  }
  return resolved;
}

function checkSpec(spec: FileSetSpec): FileSetSpec {
  const kind = spec.kind as string;
  if (spec.kind === 'directory') {
    if (spec.directory.length === 0) throw new ConfigError('files.directory', 'must not be empty');
    if (spec.extension.length === 0) {
      throw new ConfigError('files.extension', 'must not be empty (e.g. ".ndjson")');
    }
    return spec;
  }
  if (kind !== 'paths') {
    throw new ConfigError('files.kind', `${JSON.stringify(kind)} is not "directory" or "paths"`);
  }
  spec.paths.forEach((p, i) => {
    if (p.length === 0) throw new ConfigError(`files.paths[${i}]`, 'must not be empty');
  });
  return spec;
}

function positive(value: number | undefined, path: string, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v <= 0) {
    throw new ConfigError(path, `${String(v)} is not a positive integer`);
  }
  return v;
}
