import type { ErrorSite } from '../classify-error.js';
import { ZerobusSinkError } from '../errors.js';
import type { ZerobusTransport } from '../transport.js';
import type { NativeArrowStream } from './native-binding.js';
import { isSecondaryClosure, sdkFailure, sdkMessage } from './sdk-failure.js';
import { offsetFromSdk, offsetToSdk } from './sdk-offset.js';

export interface SdkTransportInit {
  /** Unity Catalog table, for messages. */
  readonly table: string;
  /** Bound of the probes that look for a root cause or a stream the SDK gave up on. */
  readonly probeTimeoutMs: number;
  /** Called once when the stream is closed (releases its SDK instance). */
  readonly onClosed?: () => void;
}

/**
 * A ZerobusTransport over one `ZerobusArrowStream` of the native binding,
 * shaped by the binding's hazards (docs/adr/0009):
 *
 * - Concurrent `ingestBatch` calls can receive offsets out of call order, so
 *   every submit goes through one ordered chain, and an offset that does not
 *   increase is refused as a dead stream.
 * - Waiting on an offset the SDK has not returned blocks until the flush
 *   timeout, so only returned offsets may be waited on; anything else fails
 *   at once.
 * - A wait holds the stream's lock and stalls submits for as long as it
 *   lasts. Submits already on their way are let in before a wait starts.
 *   The sink never submits into a waiting stream: its lane sends a burst,
 *   then waits once on the burst's last offset, and what is submitted
 *   meanwhile queues on the lane for the next burst (ADR 0010).
 * - Errors are plain messages: each is classified where it surfaced, and
 *   "closing or closed" is answered with the first root cause, which a
 *   bounded probe recovers when no wait has reported it yet.
 * - After a terminal failure `isClosed` can stay false, so deadness is
 *   tracked here; a transient-looking error is checked against the SDK
 *   having given up (only then does `getUnackedBatches` succeed).
 */
export class SdkTransport implements ZerobusTransport {
  private chain: Promise<unknown> = Promise.resolve();
  /** The highest offset `ingestBatch` returned; waits beyond it would hang. */
  private returned = -1;
  /** The first failure that ended the stream; every later call reports it. */
  private rootCause: ZerobusSinkError | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly native: NativeArrowStream,
    private readonly options: SdkTransportInit,
  ) {}

  submit(ipc: Uint8Array): Promise<number> {
    const step = this.chain.then(() => this.ingest(ipc));
    this.chain = step.catch(() => undefined);
    return step;
  }

  async waitForOffset(offset: number): Promise<void> {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.returned) {
      throw new ZerobusSinkError(
        'fatal-config',
        `${this.options.table}: waitForOffset(${offset}) before submit returned that offset (highest returned: ${this.returned}); the SDK would block until its flush timeout`,
      );
    }
    this.ensureUsable();
    await this.letSubmitsFirst();
    this.ensureUsable();
    try {
      await this.native.waitForOffset(offsetToSdk(offset));
    } catch (error) {
      throw await this.failure(error, 'wait');
    }
  }

  async flush(): Promise<void> {
    await this.chain;
    if (this.returned >= 0) await this.waitForOffset(this.returned);
  }

  /**
   * Idempotent. The binding flushes before it closes; a failure nobody has
   * seen yet is reported, one already reported is not repeated. Batches that
   * never got acknowledged stay with the sink, which replays them.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /**
   * The binding's wait holds the stream's lock until the acknowledgement
   * arrives, so a submit issued just after the wait started stalls for a
   * whole ack latency. Submits already chained, or issued in this turn of
   * the event loop, go first: the wait is for a returned offset and loses
   * nothing by starting a moment later. Bounded: one turn, then the chain.
   */
  private async letSubmitsFirst(): Promise<void> {
    await this.chain;
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.chain;
  }

  private async ingest(ipc: Uint8Array): Promise<number> {
    this.ensureUsable();
    let raw: bigint;
    try {
      raw = await this.native.ingestBatch(Buffer.from(ipc.buffer, ipc.byteOffset, ipc.byteLength));
    } catch (error) {
      throw await this.failure(error, 'submit');
    }
    let offset: number;
    try {
      offset = offsetFromSdk(raw, this.options.table);
    } catch (error) {
      throw this.terminal(
        error instanceof ZerobusSinkError
          ? error
          : new ZerobusSinkError('poison-stream', String(error), error),
      );
    }
    if (offset <= this.returned) {
      // The chain makes this unreachable; if it happens, cumulative waits
      // would confirm batches they do not cover: lead, which is loss.
      throw this.terminal(
        new ZerobusSinkError(
          'poison-stream',
          `${this.options.table}: the SDK returned offset ${offset} after ${this.returned}`,
        ),
      );
    }
    this.returned = offset;
    return offset;
  }

  private async shutdown(): Promise<void> {
    const reported = this.rootCause !== null;
    try {
      await this.native.close();
    } catch (error) {
      if (!reported && !isSecondaryClosure(error))
        throw sdkFailure(error, 'wait', this.options.table);
    } finally {
      this.rootCause ??= new ZerobusSinkError(
        'poison-stream',
        `${this.options.table}: stream closed`,
      );
      this.options.onClosed?.();
    }
  }

  private ensureUsable(): void {
    if (this.rootCause !== null) throw this.rootCause;
    if (this.closing !== null)
      throw new ZerobusSinkError('poison-stream', `${this.options.table}: stream closed`);
  }

  /** Turns a binding error into the failure to report, keeping the first root cause. */
  private async failure(error: unknown, site: ErrorSite): Promise<ZerobusSinkError> {
    if (isSecondaryClosure(error)) {
      if (this.rootCause !== null) return this.rootCause;
      const root = this.closing === null ? await this.probeRootCause() : null;
      return this.terminal(
        root ??
          new ZerobusSinkError(
            'poison-stream',
            `${this.options.table}: ${site} failed: ${sdkMessage(error)} (no root cause reported)`,
            error,
          ),
      );
    }
    const classified = sdkFailure(error, site, this.options.table);
    if (classified.failure === 'transient') {
      // Recovery is the SDK's job; if it gave up, retrying in place is futile.
      if (this.closing === null && (await this.sdkGaveUp()))
        return this.terminal(
          new ZerobusSinkError(
            'poison-stream',
            `${this.options.table}: ${site} failed and the SDK stopped recovering the stream: ${sdkMessage(error)}`,
            error,
          ),
        );
      return classified;
    }
    if (classified.failure === 'poison-batch') return classified;
    return this.terminal(classified);
  }

  private terminal(error: ZerobusSinkError): ZerobusSinkError {
    this.rootCause ??= error;
    return this.rootCause;
  }

  /** On a failed stream `flush` rejects at once with the failure that ended it. */
  private async probeRootCause(): Promise<ZerobusSinkError | null> {
    const probe = this.native.flush().then(
      () => null,
      (error: unknown) =>
        isSecondaryClosure(error) ? null : sdkFailure(error, 'wait', this.options.table),
    );
    return within(probe, this.options.probeTimeoutMs, null);
  }

  /** `getUnackedBatches` succeeds only once the SDK has given a stream up. */
  private async sdkGaveUp(): Promise<boolean> {
    const probe = this.native.getUnackedBatches().then(
      () => true,
      () => false,
    );
    return within(probe, this.options.probeTimeoutMs, false);
  }
}

/** Ends a race with `work` after `ms`, resolving to `fallback`; the timer never holds the process. */
async function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
