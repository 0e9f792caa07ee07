import type { Readable } from 'node:stream';
import {
  objectWith,
  parseConfig,
  timerScheduler,
  type BackoffPolicy,
  type Scheduler,
} from '@thalweg/connector-core';
import { z } from 'zod';

/**
 * Where the one stream comes from. `readable` is any Node Readable
 * (`process.stdin`, a child's stdout): it is read as it is, never resumed.
 */
export type IpcStreamConnection =
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'http'; readonly url: string; readonly headers?: Record<string, string> }
  | { readonly kind: 'readable'; readonly readable: Readable };

export interface IpcStreamSourceOptions {
  readonly connection: IpcStreamConnection;
  /** The partition's topic (the stream is partition 0 of it). */
  readonly topic: string;
  /** Hashed into every record id: keep it stable for the life of the data. Default `ipc-stream`. */
  readonly cluster?: string;
  /** Speak the resume handshake (stream-spec.md): tcp, unix and http only. Default false. */
  readonly resume?: boolean;
  /** A timestamp or date32 column giving each record's time; default: when the batch arrived. */
  readonly timestampColumn?: string;
  /** Records per yielded batch at most (an Arrow batch is split). Default 1000. */
  readonly maxBatchRecords?: number;
  /** The largest IPC message read (prefix, metadata, body); a larger one is refused. Default 64 MiB. */
  readonly maxMessageBytes?: number;
  /** Batches held read and not yet yielded, before the socket stops being read. Default 64. */
  readonly prefetchBatches?: number;
  /** Record value bytes held read and not yet yielded, likewise. Default 16 MiB. */
  readonly prefetchBytes?: number;
  /** Reconnects of a resumable stream: backoff, and how many failed attempts in a row fail it. */
  readonly reconnect?: Partial<BackoffPolicy> & { readonly maxAttempts?: number };
  /** Where the backoff waits run; default real timers. */
  readonly scheduler?: Scheduler;
}

export interface ResolvedOptions {
  readonly connection: IpcStreamConnection;
  readonly topic: string;
  readonly cluster: string;
  readonly resume: boolean;
  readonly timestampColumn: string | undefined;
  readonly maxBatchRecords: number;
  readonly maxMessageBytes: number;
  readonly prefetchBatches: number;
  readonly prefetchBytes: number;
  readonly reconnect: BackoffPolicy & { readonly maxAttempts: number };
  readonly scheduler: Scheduler;
}

export const DEFAULTS = {
  cluster: 'ipc-stream',
  maxBatchRecords: 1000,
  maxMessageBytes: 64 * 1024 * 1024,
  prefetchBatches: 64,
  prefetchBytes: 16 * 1024 * 1024,
  reconnect: { baseDelayMs: 100, maxDelayMs: 10_000, maxAttempts: 10 },
} as const;

/** The root of every option path of this source (the shared convention, parse-config.ts). */
export const OPTIONS_PATH = 'ipcStreamSource';

const positive = z.number().int().positive();
const text = z.string().min(1, 'must not be empty');

const connectionSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({
      kind: z.literal('tcp'),
      host: text,
      port: z.number().int().min(1).max(65535),
    }),
    z.strictObject({ kind: z.literal('unix'), path: text }),
    z.strictObject({
      kind: z.literal('http'),
      url: z.string().regex(/^https?:\/\//, 'must be an http:// or https:// URL'),
      headers: z.record(z.string(), z.string()).optional(),
    }),
    z.strictObject({
      kind: z.literal('readable'),
      readable: objectWith<Readable>('read', 'a Node Readable (process.stdin, a socket)'),
    }),
  ],
  { error: 'must be { kind: "tcp" | "unix" | "http" | "readable", ... }' },
);

/** The options as data: strict, so a misspelt knob is refused rather than left at its default. */
export const ipcStreamSourceOptionsSchema = z
  .strictObject({
    connection: connectionSchema,
    topic: text,
    cluster: text.default(DEFAULTS.cluster),
    resume: z.boolean().default(false),
    timestampColumn: text.optional(),
    maxBatchRecords: positive.default(DEFAULTS.maxBatchRecords),
    maxMessageBytes: positive.default(DEFAULTS.maxMessageBytes),
    prefetchBatches: positive.default(DEFAULTS.prefetchBatches),
    prefetchBytes: positive.default(DEFAULTS.prefetchBytes),
    reconnect: z
      .strictObject({
        baseDelayMs: positive.default(DEFAULTS.reconnect.baseDelayMs),
        maxDelayMs: positive.default(DEFAULTS.reconnect.maxDelayMs),
        maxAttempts: positive.default(DEFAULTS.reconnect.maxAttempts),
      })
      .default(DEFAULTS.reconnect),
    scheduler: objectWith<Scheduler>('after', 'a Scheduler (every, after)').optional(),
  })
  .superRefine((o, ctx) => {
    if (o.resume && o.connection.kind === 'readable') {
      ctx.addIssue({
        code: 'custom',
        path: ['resume'],
        message:
          'a Readable (stdin, a pipe) cannot be resumed: only tcp, unix and http producers answer the handshake',
      });
    }
  });

/** Validated once, at the edge; a refusal names the option's path (`ipcStreamSource.resume`). */
export function resolveOptions(options: IpcStreamSourceOptions): ResolvedOptions {
  const o = parseConfig(ipcStreamSourceOptionsSchema, options, OPTIONS_PATH);
  return {
    connection: o.connection as IpcStreamConnection,
    topic: o.topic,
    cluster: o.cluster,
    resume: o.resume,
    timestampColumn: o.timestampColumn,
    maxBatchRecords: o.maxBatchRecords,
    maxMessageBytes: o.maxMessageBytes,
    prefetchBatches: o.prefetchBatches,
    prefetchBytes: o.prefetchBytes,
    reconnect: o.reconnect,
    scheduler: o.scheduler ?? timerScheduler,
  };
}

/** The effective settings, one line, for the start log. */
export function describeOptions(o: ResolvedOptions): string {
  const c = o.connection;
  const where =
    c.kind === 'tcp'
      ? `tcp=${c.host}:${c.port}`
      : c.kind === 'unix'
        ? `unix=${c.path}`
        : c.kind === 'http'
          ? `http=${c.url}`
          : 'readable';
  return [
    where,
    `topic=${o.topic}`,
    `cluster=${o.cluster}`,
    `resume=${o.resume}`,
    `maxBatchRecords=${o.maxBatchRecords}`,
    `maxMessageBytes=${o.maxMessageBytes}`,
    `prefetchBatches=${o.prefetchBatches}`,
    `prefetchBytes=${o.prefetchBytes}`,
  ].join(' ');
}
