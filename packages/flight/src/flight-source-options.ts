import { timerScheduler, type BackoffPolicy, type Scheduler } from '@thalweg/connector-core';
import { FlightError } from './errors.js';
import type { FlightClient } from './flight-client.js';

export interface FlightSourceOptions {
  /** `grpc://host:port` of the Flight server, or a client to share. */
  readonly url: string | FlightClient;
  /** The live stream's name: the ticket is `{"stream": name, ...}`. */
  readonly stream: string;
  /** The partition's topic (the stream is partition 0 of it). Default: the stream's name. */
  readonly topic?: string;
  /** Hashed into every record id: keep it stable for the life of the data. Default `flight`. */
  readonly cluster?: string;
  /**
   * The server resumes (ADR 0033): the ticket carries `"from": <next row>`
   * and each batch `{"offset"}`. Default false: the source counts rows itself.
   */
  readonly resumable?: boolean;
  /** More ticket fields the server wants, besides `stream` and `from`. */
  readonly ticket?: Readonly<Record<string, unknown>>;
  /** A timestamp or date32 column giving each record's time; default: when the batch arrived. */
  readonly timestampColumn?: string;
  /** Records per yielded batch at most (a Flight batch is split). Default 1000. */
  readonly maxBatchRecords?: number;
  /** Batches held read and not yet yielded, before the DoGet stops being read. Default 64. */
  readonly prefetchBatches?: number;
  /** Record value bytes held read and not yet yielded, likewise. Default 16 MiB. */
  readonly prefetchBytes?: number;
  /** Reconnects of a resumable stream: backoff, and how many failed attempts in a row fail it. */
  readonly reconnect?: Partial<BackoffPolicy> & { readonly maxAttempts?: number };
  /** Where the backoff waits run; default real timers. */
  readonly scheduler?: Scheduler;
}

export interface ResolvedFlightSourceOptions {
  readonly url: string | FlightClient;
  readonly stream: string;
  readonly topic: string;
  readonly cluster: string;
  readonly resumable: boolean;
  readonly ticket: Readonly<Record<string, unknown>>;
  readonly timestampColumn: string | undefined;
  readonly maxBatchRecords: number;
  readonly prefetchBatches: number;
  readonly prefetchBytes: number;
  readonly reconnect: BackoffPolicy & { readonly maxAttempts: number };
  readonly scheduler: Scheduler;
}

export const FLIGHT_SOURCE_DEFAULTS = {
  cluster: 'flight',
  maxBatchRecords: 1000,
  prefetchBatches: 64,
  prefetchBytes: 16 * 1024 * 1024,
  reconnect: { baseDelayMs: 100, maxDelayMs: 10_000, maxAttempts: 10 },
} as const;

/** The options with their defaults, each checked: a refusal names the field (`flight.stream`). */
export function resolveFlightSourceOptions(o: FlightSourceOptions): ResolvedFlightSourceOptions {
  const text = (value: unknown, field: string): string => {
    if (typeof value !== 'string' || value === '') refuse(field, 'a non-empty string');
    return value;
  };
  const count = (value: number | undefined, fallback: number, field: string): number => {
    const v = value ?? fallback;
    if (!Number.isSafeInteger(v) || v < 1) refuse(field, `a positive integer, not ${String(v)}`);
    return v;
  };
  const d = FLIGHT_SOURCE_DEFAULTS;
  const stream = text(o.stream, 'stream');
  // Untyped input (a config file) may hold anything here.
  const url: unknown = o.url;
  if (typeof url !== 'string' && typeof (url as { doGet?: unknown } | null)?.doGet !== 'function') {
    refuse('url', 'a grpc:// URL or a FlightClient');
  }
  const ticket = o.ticket ?? {};
  for (const key of ['stream', 'from']) {
    if (key in ticket) refuse(`ticket.${key}`, 'set by the source itself');
  }
  const r = o.reconnect ?? {};
  return {
    url: o.url,
    stream,
    topic: text(o.topic ?? stream, 'topic'),
    cluster: text(o.cluster ?? d.cluster, 'cluster'),
    resumable: o.resumable ?? false,
    ticket,
    timestampColumn: o.timestampColumn,
    maxBatchRecords: count(o.maxBatchRecords, d.maxBatchRecords, 'maxBatchRecords'),
    prefetchBatches: count(o.prefetchBatches, d.prefetchBatches, 'prefetchBatches'),
    prefetchBytes: count(o.prefetchBytes, d.prefetchBytes, 'prefetchBytes'),
    reconnect: {
      baseDelayMs: count(r.baseDelayMs, d.reconnect.baseDelayMs, 'reconnect.baseDelayMs'),
      maxDelayMs: count(r.maxDelayMs, d.reconnect.maxDelayMs, 'reconnect.maxDelayMs'),
      maxAttempts: count(r.maxAttempts, d.reconnect.maxAttempts, 'reconnect.maxAttempts'),
    },
    scheduler: o.scheduler ?? timerScheduler,
  };
}

/** The effective settings, one line, for the debug log. */
export function describeFlightSourceOptions(o: ResolvedFlightSourceOptions): string {
  const url = typeof o.url === 'string' ? o.url : o.url.url;
  return [
    `url=${url}`,
    `stream=${o.stream}`,
    `topic=${o.topic}`,
    `cluster=${o.cluster}`,
    `resumable=${o.resumable}`,
    `maxBatchRecords=${o.maxBatchRecords}`,
    `prefetchBatches=${o.prefetchBatches}`,
    `prefetchBytes=${o.prefetchBytes}`,
    `reconnect=${o.reconnect.baseDelayMs}..${o.reconnect.maxDelayMs}ms x${o.reconnect.maxAttempts}`,
  ].join(' ');
}

function refuse(field: string, what: string): never {
  throw new FlightError('TWG_FLIGHT_MISUSE', `flight.${field}: ${what}`);
}
