import { classifyZerobusError } from '../classify-error.js';
import { ZerobusSinkError } from '../errors.js';
import type { StreamSpec, TransportFactory, ZerobusTransport } from '../transport.js';
import { toNativeSchemaFields } from './arrow-data-type.js';
import {
  loadZerobusBinding,
  type NativeArrowStreamOptions,
  type NativeZerobusSdk,
  type ZerobusBinding,
} from './native-binding.js';
import { sdkMessage, withStatusName } from './sdk-failure.js';
import {
  describeSdkTransportOptions,
  nativeStreamOptions,
  parseSdkTransportOptions,
  type SdkTransportOptions,
} from './sdk-options.js';
import { SdkTransport } from './sdk-transport.js';

export interface SdkTransportFactoryDeps {
  /** Start-up log, one line per knob (the secret redacted), for a debug log. Default: silent. */
  readonly log?: (line: string) => void;
  /** The binding to use instead of loading the optional dependency (tests, other platforms). */
  readonly binding?: ZerobusBinding;
}

interface SdkSlot {
  readonly sdk: NativeZerobusSdk;
  open: number;
}

/**
 * Opens SdkTransports over the native Zerobus binding. The binding is
 * loaded when the factory is built, so a missing binding fails at start-up
 * with the package to install, and not at the first batch. Streams share an
 * SDK instance up to `streamsPerSdk` open streams each.
 */
export class SdkTransportFactory implements TransportFactory {
  readonly options: SdkTransportOptions;
  private readonly binding: ZerobusBinding;
  private readonly streamOptions: NativeArrowStreamOptions;
  private readonly slots: SdkSlot[] = [];

  constructor(options: unknown, deps: SdkTransportFactoryDeps = {}) {
    this.options = parseSdkTransportOptions(options);
    this.binding = deps.binding ?? loadZerobusBinding();
    this.streamOptions = nativeStreamOptions(this.options.stream, this.binding.IpcCompressionType);
    const log = deps.log ?? (() => undefined);
    for (const line of describeSdkTransportOptions(this.options))
      log(`thalweg sink-zerobus sdk: ${line}`);
  }

  async open(spec: StreamSpec): Promise<ZerobusTransport> {
    const schemaFields = toNativeSchemaFields(spec.fields, this.binding);
    const slot = this.lease(spec.table);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      slot.open -= 1;
    };
    try {
      const native = await slot.sdk.createArrowStream(
        { tableName: spec.table, schemaFields },
        this.options.clientId,
        this.options.clientSecret,
        this.streamOptions,
      );
      return new SdkTransport(native, {
        table: spec.table,
        probeTimeoutMs: this.options.probeTimeoutMs,
        onClosed: release,
      });
    } catch (error) {
      release();
      throw createFailure(error, spec.table);
    }
  }

  /** SDK instances in use and the streams open on each, for diagnostics and tests. */
  get sdkLoad(): number[] {
    return this.slots.map((s) => s.open);
  }

  private lease(table: string): SdkSlot {
    let slot = this.slots.find((s) => s.open < this.options.streamsPerSdk);
    if (slot === undefined) {
      let sdk: NativeZerobusSdk;
      try {
        const { applicationName } = this.options;
        sdk = new this.binding.ZerobusSdk(
          this.options.zerobusEndpoint,
          this.options.unityCatalogUrl,
          applicationName === undefined ? {} : { applicationName },
        );
      } catch (error) {
        // Thrown synchronously for a bad endpoint ("Failed to extract workspace_id").
        throw createFailure(error, table);
      }
      slot = { sdk, open: 0 };
      this.slots.push(slot);
    }
    slot.open += 1;
    return slot;
  }
}

function createFailure(error: unknown, table: string): ZerobusSinkError {
  if (error instanceof ZerobusSinkError) return error;
  const message = withStatusName(sdkMessage(error));
  return new ZerobusSinkError(
    classifyZerobusError(new Error(message), 'create'),
    `opening a Zerobus stream to ${table} failed: ${message}`,
    error,
  );
}
