import { z } from 'zod';
import { parseConfig } from '@thalweg/connector-core';
import { ZerobusSinkError } from '../errors.js';
import type { NativeArrowStreamOptions } from './native-binding.js';

const ms = (fallback: number) => z.number().int().min(1).max(2_147_483_647).default(fallback);

/**
 * Options the SDK applies to each Arrow stream. Every value is passed
 * explicitly (the defaults below are the SDK's own), so that what the
 * start-up log prints is what is in force, whatever a later SDK defaults to.
 */
export const sdkStreamOptionsSchema = z
  .object({
    /** Batches queued and unacknowledged per stream before `ingestBatch` blocks. */
    maxInflightBatches: z.number().int().min(1).max(1_000_000).default(1000),
    /** The SDK reconnects and replays by itself on retryable failures. */
    recovery: z.boolean().default(true),
    recoveryTimeoutMs: ms(15_000),
    recoveryBackoffMs: ms(2_000),
    recoveryRetries: z.number().int().min(0).max(1_000).default(4),
    /** No acknowledgement for this long with batches in flight counts as a failure. */
    serverLackOfAckTimeoutMs: ms(60_000),
    /** Upper bound of any wait (waitForOffset, flush, close): a hung peer cannot hang us. */
    flushTimeoutMs: ms(300_000),
    connectionTimeoutMs: ms(30_000),
    ipcCompression: z.enum(['none', 'lz4-frame', 'zstd']).default('none'),
  })
  .strict()
  .prefault({});

export const sdkTransportOptionsSchema = z
  .object({
    /**
     * The Zerobus endpoint with its scheme, e.g.
     * `https://<workspace-id>.zerobus.<region>.cloud.databricks.com`. The SDK
     * takes the workspace id from the host up to its first dot.
     */
    zerobusEndpoint: z
      .string()
      .regex(/^https?:\/\/[^/\s]+/, 'must start with https:// (or http:// for a plaintext peer)'),
    /** The workspace URL; the OAuth token comes from `{unityCatalogUrl}/oidc/v1/token`. */
    unityCatalogUrl: z.string().regex(/^https?:\/\/[^/\s]+/, 'must start with https://'),
    clientId: z.string().min(1),
    clientSecret: z.string().min(1),
    /** Sent in the user agent. */
    applicationName: z.string().min(1).optional(),
    /**
     * Streams opened through one SDK instance before another is created.
     * The 1.3.0 binding opens one connection per stream either way (observed
     * on the local peer); an instance mostly holds its runtime and tokens.
     */
    streamsPerSdk: z.number().int().min(1).max(1_024).default(8),
    /** How long to look for a failure's root cause when the SDK reports only "closing or closed". */
    probeTimeoutMs: ms(1_000),
    stream: sdkStreamOptionsSchema,
  })
  .strict();

export type SdkTransportOptionsInput = z.input<typeof sdkTransportOptionsSchema>;
export type SdkTransportOptions = z.output<typeof sdkTransportOptionsSchema>;

export function parseSdkTransportOptions(
  input: unknown,
  path = 'zerobus.sdk',
): SdkTransportOptions {
  return parseConfig(sdkTransportOptionsSchema, input, path);
}

/** One line per knob for the start-up log; the client secret is never printed. */
export function describeSdkTransportOptions(options: SdkTransportOptions): string[] {
  const { stream, ...rest } = options;
  return [
    ...Object.entries(rest).map(
      ([k, v]) => `${k}=${k === 'clientSecret' ? '(redacted)' : String(v)}`,
    ),
    ...Object.entries(stream).map(([k, v]) => `stream.${k}=${String(v)}`),
  ];
}

/** The stream options in the binding's shape, compression mapped onto its enum. */
export function nativeStreamOptions(
  stream: SdkTransportOptions['stream'],
  compression: Readonly<Record<string, unknown>>,
): NativeArrowStreamOptions {
  const { ipcCompression, ...rest } = stream;
  if (ipcCompression === 'none') return rest;
  const member = ipcCompression === 'zstd' ? 'Zstd' : 'Lz4Frame';
  const value = compression[member];
  if (typeof value !== 'number') {
    throw new ZerobusSinkError(
      'fatal-config',
      `stream.ipcCompression: the native binding has no IpcCompressionType.${member}`,
    );
  }
  return { ...rest, ipcCompression: value };
}
