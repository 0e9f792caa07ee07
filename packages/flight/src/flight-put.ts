import type { ClientDuplexStream } from '@grpc/grpc-js';
import type { RecordBatch, Schema } from 'apache-arrow';
import { FlightError, atMessage } from './errors.js';
import { batchFlightData, schemaFlightData } from './flight-data-framing.js';
import { decodeSingleBytes, encodeFlightData, type FlightDescriptor } from './flight-messages.js';
import { callError } from './flight-service.js';

export interface FlightPutOptions {
  readonly descriptor: FlightDescriptor;
  readonly schema: Schema;
  /** Names the call in errors (`DoPut path a/b`). */
  readonly call: string;
  readonly url: string;
  readonly signal?: AbortSignal | undefined;
}

/**
 * One DoPut call. `write` sends a batch and resolves once the call can take
 * more (gRPC flow control: the stream's buffer is below its mark again), so
 * a loop of awaited writes never outruns the server. `results` yields each
 * PutResult's app_metadata as the server sends it: in the server's order,
 * which need not be the order of the batches; it is not reordered here.
 * `end` half-closes the call; `results` ends when the server ends it, and
 * `done` settles then.
 *
 * A failure of the call (the server's error status, a lost connection, the
 * signal) is never dropped: every later `write` rejects with it, `results`
 * rejects with it, and so does `done`.
 */
export class FlightPut {
  /** Settles when the server has ended the call: resolved on OK, rejected with its failure. */
  readonly done: Promise<void>;
  private failure: FlightError | undefined;
  private readonly failed: Promise<never>;
  private readonly schemaHeader: Uint8Array;
  private ended = false;
  private resultsTaken = false;

  constructor(
    private readonly stream: ClientDuplexStream<Uint8Array, Uint8Array>,
    private readonly options: FlightPutOptions,
  ) {
    const { signal } = options;
    let reject: (e: FlightError) => void = () => undefined;
    this.failed = new Promise<never>((_, r) => (reject = r));
    // Observed here so that a failure nobody awaits yet is not an
    // unhandled rejection; every reader of `failed` still gets it.
    this.failed.catch(() => undefined);
    const onAbort = () => stream.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.done = new Promise<void>((resolve, rejectDone) => {
      stream.on('error', (cause: unknown) => {
        this.failure ??= callError(cause, options);
        reject(this.failure);
        rejectDone(this.failure);
      });
      stream.on('status', (s: { code: number }) => {
        if (s.code === 0) resolve();
      });
    });
    this.done.catch(() => undefined);
    void this.done
      .finally(() => signal?.removeEventListener('abort', onAbort))
      .catch(() => undefined);
    if (signal?.aborted === true) stream.cancel();
    const first = schemaFlightData(options.schema, options.descriptor);
    this.schemaHeader = first.dataHeader;
    stream.write(encodeFlightData(first));
  }

  /**
   * Sends one batch with its app_metadata. Resolves when the call can take
   * the next; rejects with the call's failure, or TWG_FLIGHT_MISUSE for a
   * write after `end` or a batch of another schema.
   */
  async write(batch: RecordBatch, appMetadata: Uint8Array | null = null): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (this.ended) {
      throw new FlightError('TWG_FLIGHT_MISUSE', 'write after end', { call: this.options.call });
    }
    const data = batchFlightData(batch, this.schemaHeader, appMetadata ?? new Uint8Array(0));
    if (this.stream.write(encodeFlightData(data))) return;
    await Promise.race([
      new Promise<void>((resolve) => this.stream.once('drain', resolve)),
      this.failed,
    ]);
  }

  /** Half-closes the call: no more batches; the server still sends PutResults. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stream.end();
  }

  /** The app_metadata of each PutResult, in the order the server sends them. Iterated once. */
  get results(): AsyncIterable<Uint8Array> {
    if (this.resultsTaken) {
      throw new FlightError('TWG_FLIGHT_MISUSE', 'results are iterated once', {
        call: this.options.call,
      });
    }
    this.resultsTaken = true;
    return this.readResults();
  }

  private async *readResults(): AsyncGenerator<Uint8Array> {
    let index = 0;
    try {
      for await (const bytes of this.stream) {
        yield atMessage(
          () => decodeSingleBytes(bytes as Uint8Array, 'PutResult'),
          this.options.call,
          index,
        );
        index += 1;
      }
    } catch (cause) {
      throw this.failure ?? callError(cause, this.options);
    }
    // The readable side ends before grpc-js reports the status: a failure
    // status still rejects here rather than passing for a clean end.
    await this.done;
  }
}
