import {
  OneStreamPartition,
  StreamFeed,
  backoffDelay,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import { planRows, planTimestamp, recordRuns, type RowPlans } from '@thalweg/stream-arrow';
import type { RecordBatch } from 'apache-arrow';
import { FlightError } from './errors.js';
import { flightClient, type FlightBatch, type FlightClient } from './flight-client.js';
import {
  resolveFlightSourceOptions,
  type FlightSourceOptions,
  type ResolvedFlightSourceOptions,
} from './flight-source-options.js';

/** Counters of a `FlightSource`, for health reports and for tests that prove bounded memory. */
export interface FlightSourceStats {
  /** Rows read and queued (duplicates of a resume not counted). */
  readonly rows: number;
  /** Flight batches read. */
  readonly batches: number;
  /** DoGet calls reopened after a drop. */
  readonly reconnects: number;
  /** Rows a resumed server sent again below our position, dropped. */
  readonly duplicatesDropped: number;
  /** The most record value bytes the prefetch queue held. */
  readonly maxQueuedBytes: number;
}

/** How one DoGet ended: at the stream's end, or dropped (and whether it had delivered new rows). */
type Outcome = 'end' | { readonly dropped: FlightError; readonly progressed: boolean };

/**
 * One Flight live stream (a DoGet of `{"stream": name}`) as one partition
 * `{ topic, partition: 0 }`, its rows numbered from 0 across batches (the
 * row offset of ADR 0033); each row is a record whose value is the row as
 * JSON, exactly as the IPC stream source renders rows (stream-arrow's
 * `recordRuns`).
 *
 * The DoGet is pulled only while the partition is neither paused by the
 * pipeline nor held by the full prefetch queue: gRPC's flow control then
 * holds the server, and memory stays bounded. A resumable stream asks for
 * `"from": <next row>`, numbers rows by the server's `{"offset"}` and drops
 * those below `next`; after a drop it reconnects (backoff on the injected
 * scheduler) from the row after the last one queued. A non-resumable stream
 * counts rows itself and fails on a drop, naming the last row taken.
 */
export class FlightSource implements StoreManagedSource {
  readonly regime = 'store-managed' as const;
  readonly origin: { readonly kind: 'non-replayable'; readonly resumable: boolean };
  readonly cluster: string;
  private readonly options: ResolvedFlightSourceOptions;
  private readonly client: FlightClient;
  private readonly ownsClient: boolean;
  /** The partition, its feed and the cursor rules. */
  private readonly stream: OneStreamPartition;
  private readonly feed: StreamFeed;
  private readonly abort = new AbortController();
  /** The offset after the last row queued: where a reconnect resumes. */
  private next = 0;
  private counts = { rows: 0, batches: 0, reconnects: 0, duplicatesDropped: 0 };

  constructor(options: FlightSourceOptions) {
    this.options = resolveFlightSourceOptions(options);
    const { url } = this.options;
    this.ownsClient = typeof url === 'string';
    this.client = typeof url === 'string' ? flightClient(url) : url;
    this.origin = { kind: 'non-replayable', resumable: this.options.resumable };
    this.cluster = this.options.cluster;
    this.stream = new OneStreamPartition({
      topic: this.options.topic,
      resumable: this.options.resumable,
      prefetchBatches: this.options.prefetchBatches,
      prefetchBytes: this.options.prefetchBytes,
      stop: () => this.abort.abort(),
      onAbort: 'stop',
      fail: (_fault, message) => new FlightError('TWG_FLIGHT_STATE', message),
    });
    this.feed = this.stream.feed;
  }

  partitions(): readonly SourcePartition[] {
    return this.stream.partitions();
  }

  /**
   * Resumable: a `stream-token` cursor (the token is the stream's name) and
   * the next row. Not resumable: a `log-offset` cursor; the new stream's
   * rows are numbered from it, so offsets never repeat across runs.
   */
  seek(partition: SourcePartition, cursor: SourceCursor): void {
    this.next = this.stream.seek(partition, cursor, (token) => {
      if (token !== '' && token !== this.options.stream) {
        throw new FlightError(
          'TWG_FLIGHT_STATE',
          `the cursor is of stream ${JSON.stringify(token)}, this source reads ${JSON.stringify(this.options.stream)}`,
        );
      }
    });
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    return this.stream.cursorAt(partition, next, this.options.stream);
  }

  pause(partitions: readonly SourcePartition[]): void {
    this.stream.pause(partitions);
  }

  resume(partitions: readonly SourcePartition[]): void {
    this.stream.resume(partitions);
  }

  prefetchFill(): number {
    return this.stream.prefetchFill();
  }

  stats(): FlightSourceStats {
    return { ...this.counts, maxQueuedBytes: this.feed.maxQueuedBytes };
  }

  close(): Promise<void> {
    this.feed.close();
    if (this.ownsClient) this.client.close();
    return Promise.resolve();
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    yield* this.stream.batches(signal, () => this.pump());
  }

  /** Opens the DoGet and reads it; a resumable stream reopens after a drop, until its end. */
  private async pump(): Promise<void> {
    const { resumable, reconnect } = this.options;
    for (let failed = 0; ;) {
      if (this.feed.closed) return;
      const outcome = await this.read();
      if (outcome === 'end' || this.isClosed()) return;
      const cause = outcome.dropped;
      if (!resumable || cause.errorClass !== 'transient') {
        const last = this.next - 1;
        throw new FlightError(
          'TWG_FLIGHT_STREAM_DROPPED',
          `stream ${JSON.stringify(this.options.stream)} ${resumable ? 'failed' : 'dropped and cannot resume'} after ${this.counts.rows} rows; the last row taken is offset ${last < 0 ? 'none' : last}${resumable ? '' : ', what the server sent after it is lost'}: ${cause.message}`,
          {},
          { cause, errorClass: resumable ? 'poison' : 'fatal-config' },
        );
      }
      // A connection that delivered rows resets the count of failures in a row.
      failed = outcome.progressed ? 1 : failed + 1;
      if (failed > reconnect.maxAttempts) {
        throw new FlightError(
          'TWG_FLIGHT_STREAM_DROPPED',
          `stream ${JSON.stringify(this.options.stream)}: ${reconnect.maxAttempts} reconnects in a row failed, at row ${this.next}: ${cause.message}`,
          {},
          { cause },
        );
      }
      this.counts.reconnects += 1;
      await this.backoff(failed);
    }
  }

  /** One DoGet from `next`, rows numbered by the server's offsets or counted from `next`. */
  private async read(): Promise<Outcome> {
    const { resumable, stream, ticket } = this.options;
    const body = resumable ? { ...ticket, stream, from: this.next } : { ...ticket, stream };
    const ticketBytes = new TextEncoder().encode(JSON.stringify(body));
    const batches = this.client.doGet(ticketBytes, this.abort.signal);
    let row = this.next;
    let plan: RowPlans | undefined;
    let progressed = false;
    try {
      for (let index = 0; ; index++) {
        await this.feed.readable();
        if (this.feed.closed) return 'end';
        let step: IteratorResult<FlightBatch>;
        try {
          step = await batches.next();
        } catch (cause) {
          if (this.isClosed()) return 'end';
          if (cause instanceof FlightError) return { dropped: cause, progressed };
          throw cause;
        }
        if (step.done === true) return 'end';
        const { batch, appMetadata } = step.value;
        this.counts.batches += 1;
        if (resumable) row = offsetOf(appMetadata, stream, index);
        if (resumable && row > this.next) {
          throw new FlightError(
            'TWG_FLIGHT_STREAM_DROPPED',
            `stream ${JSON.stringify(stream)} resumed at row ${row}, after the asked ${this.next}: rows ${this.next}..${row - 1} are lost`,
            {},
            { errorClass: 'poison' },
          );
        }
        plan ??= this.planOf(batch);
        if (this.enqueue(batch, row, plan, index)) progressed = true;
        row += batch.numRows;
      }
    } finally {
      // Leaving early (closed, or a refusal) cancels the call.
      await batches.return(undefined).catch(() => undefined);
    }
  }

  private planOf(batch: RecordBatch): RowPlans {
    const column = this.options.timestampColumn;
    return {
      rows: planRows(batch.schema),
      time: column === undefined ? undefined : planTimestamp(batch.schema, column),
    };
  }

  /** Queues the rows of `batch` (numbered from `row`) at or above `next`; whether any were new. */
  private enqueue(batch: RecordBatch, row: number, plan: RowPlans, index: number): boolean {
    const skip = Math.max(0, this.next - row);
    this.counts.duplicatesDropped += Math.min(skip, batch.numRows);
    const runs = recordRuns(batch, row, skip, plan, index, this.options.maxBatchRecords);
    for (const run of runs) {
      this.next = this.feed.push(run);
      this.counts.rows += run.records.length;
    }
    return runs.length > 0;
  }

  private backoff(failedAttempt: number): Promise<void> {
    return new Promise((resolve) => {
      this.options.scheduler.after(backoffDelay(this.options.reconnect, failedAttempt), resolve);
    });
  }

  /** Read through a call, so a check after an await is not narrowed away. */
  private isClosed(): boolean {
    return this.feed.closed;
  }
}

/** The `{"offset"}` of a resumable stream's batch. */
function offsetOf(meta: Uint8Array | null, stream: string, index: number): number {
  let offset: unknown;
  try {
    offset =
      meta === null
        ? undefined
        : (JSON.parse(new TextDecoder().decode(meta)) as { offset?: unknown } | null)?.offset;
  } catch {
    offset = undefined;
  }
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw new FlightError(
      'TWG_FLIGHT_METADATA_INVALID',
      `a resumable stream's batch carries no {"offset":<row>} app_metadata`,
      { call: `DoGet stream ${JSON.stringify(stream)}`, message: index },
    );
  }
  return offset;
}
