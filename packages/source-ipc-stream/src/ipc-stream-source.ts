import {
  OneStreamPartition,
  StreamFeed,
  backoffDelay,
  type OneStreamFault,
  type SourceBatch,
  type SourceCursor,
  type SourcePartition,
  type StoreManagedSource,
} from '@thalweg/connector-core';
import {
  ArrowBatchError,
  IpcStreamDecoder,
  planRows,
  planTimestamp,
  recordRuns,
  type RowPlans,
} from '@thalweg/stream-arrow';
import { ipcBodyCodecs } from '@thalweg/wire-compression';
import type { RecordBatch } from 'apache-arrow';
import { IpcStreamSourceError, refusedAt } from './errors.js';
import { resolveOptions, type IpcStreamSourceOptions, type ResolvedOptions } from './options.js';

import { openStream, type OpenedStream } from './stream-connection.js';

/** Counters of an `IpcStreamSource`, for health reports and for tests that prove bounded memory. */
export interface IpcStreamSourceStats {
  /** Rows read and queued (duplicates of a resume not counted). */
  readonly rows: number;
  /** Arrow record batches read. */
  readonly batches: number;
  /** Bytes read from connections (handshake lines excluded). */
  readonly bytes: number;
  /** Connections reopened after a drop. */
  readonly reconnects: number;
  /** Rows a resumed producer sent again below our position, dropped. */
  readonly duplicatesDropped: number;
  /** The most record value bytes the prefetch queue held. */
  readonly maxQueuedBytes: number;
}

type Outcome = 'end' | { readonly dropped: unknown };

/**
 * One Arrow IPC stream as one partition (`{ topic, partition: 0 }`), its
 * rows numbered from 0 across batches (the row offset of stream-spec.md);
 * each row is a record whose value is the row as JSON (stream-arrow's
 * `planRows`, as the file source renders Arrow files).
 *
 * The socket is read only while the partition is neither paused by the
 * pipeline nor held by the full prefetch queue: reading stops, the
 * producer's writes block, memory stays bounded. A resumable stream
 * reconnects after a drop, asking for the row after the last one queued,
 * and drops rows below it; a non-resumable one fails on a drop, naming the
 * last row taken: what the producer sent after it is lost.
 */
export class IpcStreamSource implements StoreManagedSource {
  readonly regime = 'store-managed' as const;
  readonly origin: { readonly kind: 'non-replayable'; readonly resumable: boolean };
  readonly cluster: string;
  private readonly options: ResolvedOptions;
  /** The partition, its feed and the cursor rules. */
  private readonly stream: OneStreamPartition;
  private readonly feed: StreamFeed;
  /** The offset after the last row queued: where a reconnect resumes. */
  private next = 0;
  private streamId = '';
  private current: OpenedStream | undefined;
  private counts = { rows: 0, batches: 0, bytes: 0, reconnects: 0, duplicatesDropped: 0 };

  constructor(options: IpcStreamSourceOptions) {
    this.options = resolveOptions(options);
    this.origin = { kind: 'non-replayable', resumable: this.options.resume };
    this.cluster = this.options.cluster;
    this.stream = new OneStreamPartition({
      topic: this.options.topic,
      resumable: this.options.resume,
      prefetchBatches: this.options.prefetchBatches,
      prefetchBytes: this.options.prefetchBytes,
      stop: () => this.current?.close(),
      onAbort: 'wake',
      fail: streamFault,
    });
    this.feed = this.stream.feed;
  }

  partitions(): readonly SourcePartition[] {
    return this.stream.partitions();
  }

  /**
   * Resumable: a `stream-token` cursor, the producer's stream id and the
   * next row. Not resumable: a `log-offset` cursor; the new connection's
   * rows are numbered from it, so offsets never repeat across runs.
   */
  seek(partition: SourcePartition, cursor: SourceCursor): void {
    const next = this.stream.seek(partition, cursor);
    if (cursor.kind === 'stream-token') this.streamId = cursor.token;
    this.next = next;
  }

  cursorAt(partition: SourcePartition, next: number): SourceCursor {
    return this.stream.cursorAt(partition, next, this.streamId);
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

  stats(): IpcStreamSourceStats {
    return { ...this.counts, maxQueuedBytes: this.feed.maxQueuedBytes };
  }

  async close(): Promise<void> {
    this.feed.close();
    return Promise.resolve();
  }

  async *batches(signal: AbortSignal): AsyncIterable<SourceBatch> {
    yield* this.stream.batches(signal, () => this.pump());
  }

  /** Connects, reads, and for a resumable stream reconnects, until the end marker or a failure. */
  private async pump(): Promise<void> {
    const { connection, resume, reconnect } = this.options;
    for (let failed = 0; ;) {
      if (this.feed.closed) return;
      let opened: OpenedStream;
      try {
        opened = await openStream(
          connection,
          resume ? { stream: this.streamId, next: this.next } : undefined,
        );
      } catch (error) {
        failed += 1;
        const retry =
          resume &&
          error instanceof IpcStreamSourceError &&
          error.code === 'TWG_IPC_STREAM_CONNECT_FAILED' &&
          failed < reconnect.maxAttempts;
        if (!retry) throw error;
        await this.backoff(failed);
        continue;
      }
      failed = 0;
      this.current = opened;
      const first = opened.answer?.first ?? this.next;
      if (opened.answer !== undefined) {
        if (first > this.next) {
          opened.close();
          throw new IpcStreamSourceError(
            'TWG_IPC_STREAM_RESUME_REFUSED',
            `the producer resumes stream ${JSON.stringify(opened.answer.stream)} at row ${first}, after the asked ${this.next}: rows ${this.next}..${first - 1} are lost`,
          );
        }
        this.streamId = opened.answer.stream;
      }
      const outcome = await this.read(opened, first);
      opened.close();
      if (outcome === 'end' || this.isClosed()) return;
      if (!resume) {
        const last = this.next - 1;
        throw new IpcStreamSourceError(
          'TWG_IPC_STREAM_DROPPED',
          `the stream closed before its end marker after ${this.counts.rows} rows; the last row taken is offset ${last < 0 ? 'none' : last}, what the producer sent after it is lost`,
          {},
          outcome.dropped,
        );
      }
      this.counts.reconnects += 1;
      await this.backoff(1);
    }
  }

  /** Reads one connection's IPC stream, rows numbered from `first`. */
  private async read(opened: OpenedStream, first: number): Promise<Outcome> {
    const decoder = new IpcStreamDecoder({
      maxMessageBytes: this.options.maxMessageBytes,
      codecs: ipcBodyCodecs,
    });
    let row = first;
    let plan: RowPlans | undefined;
    const chunks = opened.readable[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
    for (;;) {
      await this.feed.readable();
      if (this.feed.closed) return 'end';
      let step: IteratorResult<Buffer | string>;
      try {
        step = await chunks.next();
      } catch (cause) {
        return { dropped: cause };
      }
      if (step.done === true) return decoder.atEnd ? 'end' : { dropped: undefined };
      const chunk = typeof step.value === 'string' ? Buffer.from(step.value) : step.value;
      this.counts.bytes += chunk.byteLength;
      decoder.push(chunk);
      for (;;) {
        const item = this.decoded(() => decoder.next(), decoder);
        if (item.kind === 'need-more') break;
        if (item.kind === 'end') return 'end';
        if (item.kind === 'schema') {
          const column = this.options.timestampColumn;
          plan = this.decoded(
            () => ({
              rows: planRows(item.schema),
              time: column === undefined ? undefined : planTimestamp(item.schema, column),
            }),
            decoder,
          );
          continue;
        }
        if (plan === undefined) continue;
        this.counts.batches += 1;
        const numRows = item.batch.numRows;
        const plans = plan;
        this.decoded(() => {
          this.enqueue(item.batch, row, plans, item.offset);
        }, decoder);
        row += numRows;
      }
    }
  }

  /** Queues the rows of `batch` (numbered from `row`) at or above `next`, in runs of maxBatchRecords. */
  private enqueue(batch: RecordBatch, row: number, plan: RowPlans, at: number): void {
    const skip = Math.max(0, this.next - row);
    this.counts.duplicatesDropped += Math.min(skip, batch.numRows);
    for (const run of recordRuns(batch, row, skip, plan, at, this.options.maxBatchRecords)) {
      this.next = this.feed.push(run);
      this.counts.rows += run.records.length;
    }
  }

  private backoff(failedAttempt: number): Promise<void> {
    return new Promise((resolve) => {
      this.options.scheduler.after(backoffDelay(this.options.reconnect, failedAttempt), resolve);
    });
  }

  /** stream-arrow's refusal as this source's, at the stream byte and batch it names. */
  private decoded<T>(run: () => T, decoder: IpcStreamDecoder): T {
    try {
      return run();
    } catch (cause) {
      throw cause instanceof ArrowBatchError ? refusedAt(cause, decoder) : cause;
    }
  }

  /** Read through a call, so a check after an await is not narrowed away. */
  private isClosed(): boolean {
    return this.feed.closed;
  }
}

/** A broken partition or cursor rule as this source's error: a call out of order, or a bad cursor field. */
function streamFault(fault: OneStreamFault, message: string): IpcStreamSourceError {
  return fault.kind === 'state'
    ? new IpcStreamSourceError('TWG_IPC_STREAM_STATE', message)
    : new IpcStreamSourceError('TWG_IPC_STREAM_CURSOR_INVALID', message, { field: fault.field });
}
