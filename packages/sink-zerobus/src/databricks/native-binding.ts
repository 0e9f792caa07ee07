import { createRequire } from 'node:module';
import { ZerobusSinkError } from '../errors.js';

/** The platform package holding the native binding (its `main` is the `.node` file). */
export const ZEROBUS_BINDING_PACKAGE = '@databricks/zerobus-ingest-sdk-linux-x64-gnu';
/** The version the adapter was written against and tested with (see docs/adr/0009). */
export const ZEROBUS_BINDING_VERSION = '1.3.0';

/** One column of the stream schema as the binding takes it. */
export interface NativeArrowField {
  readonly name: string;
  /** A value of the binding's `ArrowDataType` enum; the binding maps unknown values to Utf8. */
  readonly dataType: number;
  readonly nullable: boolean;
}

/** The binding's `ArrowStreamConfigurationOptions`; absent fields take the SDK's defaults. */
export interface NativeArrowStreamOptions {
  readonly maxInflightBatches: number;
  readonly recovery: boolean;
  readonly recoveryTimeoutMs: number;
  readonly recoveryBackoffMs: number;
  readonly recoveryRetries: number;
  readonly serverLackOfAckTimeoutMs: number;
  readonly flushTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  readonly ipcCompression?: number;
}

/**
 * The part of `ZerobusArrowStream` the adapter uses. Every method that waits
 * (`waitForOffset`, `flush`, `close`, `getUnackedBatches`) holds the stream's
 * lock for the whole wait, and so does `ingestBatch`: see sdk-transport.ts.
 */
export interface NativeArrowStream {
  /** Resolves with the batch's offset once QUEUED. Exactly one non-empty batch in IPC stream format. */
  ingestBatch(ipc: Buffer): Promise<bigint>;
  /** Cumulative: resolves once every offset <= `offset` is acknowledged; a bigint is required. */
  waitForOffset(offset: bigint): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Resolves only after a terminal failure and before close; rejects on a live stream. */
  getUnackedBatches(): Promise<Buffer[]>;
}

export interface NativeArrowTable {
  readonly tableName: string;
  readonly schemaFields: readonly NativeArrowField[];
}

export interface NativeZerobusSdk {
  createArrowStream(
    table: NativeArrowTable,
    clientId: string,
    clientSecret: string,
    options?: NativeArrowStreamOptions,
  ): Promise<NativeArrowStream>;
}

export interface NativeSdkOptions {
  readonly applicationName?: string;
}

/** The binding's exports the adapter relies on. */
export interface ZerobusBinding {
  readonly ZerobusSdk: new (
    zerobusEndpoint: string,
    unityCatalogUrl: string,
    options?: NativeSdkOptions,
  ) => NativeZerobusSdk;
  readonly ArrowDataType: Readonly<Record<string, unknown>>;
  readonly IpcCompressionType: Readonly<Record<string, unknown>>;
}

let cached: ZerobusBinding | null = null;

/**
 * Loads the native binding on first use, so that importing this entry point
 * (or the package root, which never imports this folder) works where the
 * optional dependency is absent. A missing or unloadable binding is a
 * fatal-config error that says what to install.
 */
export function loadZerobusBinding(): ZerobusBinding {
  cached ??= loadZerobusBindingWith(createRequire(import.meta.url));
  return cached;
}

/** The same with `load` in place of `require` (tests; other installations). Not cached. */
export function loadZerobusBindingWith(load: (name: string) => unknown): ZerobusBinding {
  let exported: unknown;
  try {
    exported = load(ZEROBUS_BINDING_PACKAGE);
  } catch (error) {
    // Node's resolution errors carry a `code`; anything else reads as undefined.
    const missing = (error as { code?: unknown } | null)?.code === 'MODULE_NOT_FOUND';
    throw new ZerobusSinkError(
      'fatal-config',
      missing
        ? `the Databricks Zerobus native binding is not installed: add ${ZEROBUS_BINDING_PACKAGE}@${ZEROBUS_BINDING_VERSION} (Linux x64, glibc) next to @thalweg/sink-zerobus`
        : `the Databricks Zerobus native binding ${ZEROBUS_BINDING_PACKAGE} could not be loaded on ${process.platform}-${process.arch}: ${String(error)}`,
      error,
    );
  }
  return checkSurface(exported);
}

function checkSurface(exported: unknown): ZerobusBinding {
  // Read-only probing of an untyped module: every member is checked before use.
  const surface = exported as Partial<Record<keyof ZerobusBinding, unknown>> | null;
  const problems: string[] = [];
  if (typeof surface?.ZerobusSdk !== 'function') problems.push('ZerobusSdk is not a class');
  // A class's prototype holds its methods; a non-function yields undefined here.
  const sdkProto = (surface?.ZerobusSdk as { prototype?: Record<string, unknown> } | undefined)
    ?.prototype;
  if (typeof sdkProto?.['createArrowStream'] !== 'function')
    problems.push('ZerobusSdk has no createArrowStream (the Arrow path is missing)');
  for (const name of ['ArrowDataType', 'IpcCompressionType'] as const) {
    if (typeof surface?.[name] !== 'object' || surface[name] === null)
      problems.push(`${name} is not an enum`);
  }
  if (problems.length > 0)
    throw new ZerobusSinkError(
      'fatal-config',
      `${ZEROBUS_BINDING_PACKAGE} does not have the surface this adapter was written for (${ZEROBUS_BINDING_VERSION}): ${problems.join('; ')}`,
    );
  // The untyped native module was checked member by member just above.
  return exported as ZerobusBinding;
}
