import { basename, resolve } from 'node:path';
import { objectWith, parseConfig } from '@thalweg/connector-core';
import { z } from 'zod';
import { nodeFileAccess, type FileAccess } from './file-access.js';
import type { FileSetSpec } from './file-set.js';

/**
 * Options of a `FileSetSource`. The format decides what a record is:
 *
 * - `ndjson`: one record per line, the line's bytes without its `\n` (or
 *   `\r\n`); timestamp = the file's modification time in ms.
 * - `arrow-ipc`: one record per row, the row as a JSON object (see
 *   `row-json.ts` of @thalweg/stream-arrow for the type mapping); timestamp = the file's modification
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

/** The root of every option path of this source (the shared convention, parse-config.ts). */
export const OPTIONS_PATH = 'fileSource';

const positive = z.number().int().positive();
const text = (reason: string) => z.string().min(1, reason);

const filesSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({
      kind: z.literal('directory'),
      directory: text('must not be empty'),
      extension: text('must not be empty (e.g. ".ndjson")'),
    }),
    z.strictObject({
      kind: z.literal('paths'),
      paths: z.array(text('must not be empty')),
    }),
  ],
  { error: 'must be { kind: "directory", directory, extension } or { kind: "paths", paths }' },
);

const commonShape = {
  files: filesSchema,
  topic: text('must not be empty').optional(),
  cluster: text('must not be empty').default(DEFAULTS.cluster),
  maxBatchRecords: positive.default(DEFAULTS.maxBatchRecords),
  maxBatchBytes: positive.default(DEFAULTS.maxBatchBytes),
  maxRecordBytes: positive.default(DEFAULTS.maxRecordBytes),
  maxBufferBytes: positive.default(DEFAULTS.maxBufferBytes),
  readChunkBytes: positive.default(DEFAULTS.readChunkBytes),
  access: objectWith<FileAccess>('open', 'a FileAccess (an object with an open method)').optional(),
};

/** The options as data: strict, so a misspelt knob is refused rather than left at its default. */
export const fileSetSourceOptionsSchema = z
  .discriminatedUnion(
    'format',
    [
      z.strictObject({ ...commonShape, format: z.literal('ndjson') }),
      z.strictObject({
        ...commonShape,
        format: z.literal('arrow-ipc'),
        timestampColumn: text('must not be empty').optional(),
      }),
    ],
    { error: 'must be "ndjson" or "arrow-ipc"' },
  )
  .superRefine((o, ctx) => {
    if (o.maxBufferBytes < o.readChunkBytes) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxBufferBytes'],
        message: `${o.maxBufferBytes} is below readChunkBytes (${o.readChunkBytes})`,
      });
    }
    if (o.topic === undefined && o.files.kind === 'paths') {
      ctx.addIssue({
        code: 'custom',
        path: ['topic'],
        message: 'must be set (a set of paths has no directory to name it)',
      });
    }
  });

/** Validated once, at the edge; a refusal names the option's path (`fileSource.maxBatchBytes`). */
export function resolveOptions(options: FileSetSourceOptions): ResolvedOptions {
  const o = parseConfig(fileSetSourceOptionsSchema, options, OPTIONS_PATH);
  const topic =
    o.topic ?? (o.files.kind === 'directory' ? basename(resolve(o.files.directory)) : '');
  return {
    files: o.files,
    format: o.format,
    timestampColumn: o.format === 'arrow-ipc' ? o.timestampColumn : undefined,
    topic,
    cluster: o.cluster,
    maxBatchRecords: o.maxBatchRecords,
    maxBatchBytes: o.maxBatchBytes,
    maxRecordBytes: o.maxRecordBytes,
    maxBufferBytes: o.maxBufferBytes,
    readChunkBytes: o.readChunkBytes,
    access: o.access ?? nodeFileAccess,
  };
}
