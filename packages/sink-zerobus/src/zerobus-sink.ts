import type { RecordBatch } from 'apache-arrow';
import { monotonicClock } from '@thalweg/connector-core';
import type {
  Clock,
  Confirm,
  ConfirmTarget,
  Lane,
  LaneMetrics,
  OffsetSpan,
  SinkDescriptor,
  SinkId,
} from '@thalweg/connector-core';
import {
  decodeIpcStream,
  encodeIpcStream,
  isEncodedBatch,
  type ArrowBatch,
  type BatchSchema,
  type EncodedBatch,
  type BatchSink,
  type StreamProgress,
} from '@thalweg/stream-arrow';
import {
  describeConfig,
  parseZerobusConfig,
  poolSize,
  type ZerobusConfig,
  type ZerobusConfigInput,
} from './config.js';
import { ZerobusSinkError } from './errors.js';
import type { StreamMetrics } from './stream-metrics.js';
import type { StreamField, StreamSpec, TransportFactory } from './transport.js';
import type { Catalog, TableDescription } from './catalog/catalog.js';
import { checkPrimaryRawPreconditions } from './catalog/precondition.js';
import { LiveTable } from './live-table.js';
import { streamFieldsOf } from './schema-fields.js';
import { zerobusSinkStats, type ZerobusSinkStats } from './zerobus-stats.js';
import { ZerobusStream } from './zerobus-stream.js';

export interface ZerobusSinkDeps<L extends Lane> {
  readonly id: SinkId;
  /** Validated at construction (untyped input too): an unknown key or a bad value is refused naming it. */
  readonly config: ZerobusConfigInput;
  /**
   * The stream schema. With `catalog` too, it is what a missing table is
   * created with; the streams use the live table's columns, read at the
   * first submit and again when a batch of a new shape arrives, and every
   * batch is reconciled with them before it is sent (emit-time
   * reconciliation). With `catalog` alone the table must exist.
   */
  readonly fields?: readonly StreamField[];
  /** The batches' schema, from which the stream fields are derived (`streamFieldsOf`); instead of `fields`. */
  readonly schema?: BatchSchema;
  readonly catalog?: Catalog;
  /**
   * Table properties for a table this sink creates through `catalog`.
   * Default none. `PRIMARY_RAW_TABLE_PROPERTIES` provisions a table that
   * passes `checkRawPreconditions()`.
   */
  readonly tableProperties?: Readonly<Record<string, string>>;
  /**
   * With `catalog`: describe the table again at the next submit once this
   * many ms have passed since the last describe, even when the batch's
   * shape is known (a change no batch reveals). Default: only on a new shape.
   */
  readonly redescribeAfterMs?: number;
  /** The time `redescribeAfterMs` is measured on. Default: the monotonic clock. */
  readonly clock?: Clock;
  /**
   * With `catalog`: sees every description of the table the sink reads;
   * throwing refuses the batch that made the sink read it. The primary-raw
   * sink checks its preconditions here (zerobus-raw-sink.ts).
   */
  readonly onDescribed?: (table: TableDescription) => void;
  readonly factory: TransportFactory;
  /** Where durable confirmations go: coverage for a secondary, the source position for raw. */
  readonly confirm: ConfirmTarget<L>;
  /** Arrow IPC stream bytes of exactly one batch; defaults to stream-arrow's encoder. */
  readonly encode?: (batch: RecordBatch) => Uint8Array;
  /** Operator events: confirmation-target failures and stream rebuilds. Default console.info. */
  readonly log?: (line: string) => void;
  /** The effective settings, one line per knob, at construction. Default: silent. */
  readonly debug?: (line: string) => void;
}

/**
 * The Databricks Zerobus sink: fire-and-forget Arrow ingest over a pool of
 * streams, each with its own background ack lane (see ZerobusStream).
 * `submit` returns once the batch is queued on a stream's lane; the lane
 * sends it with its burst and applies the confirmation after the durable
 * ack that covers it.
 *
 * Zerobus writes Delta. This sink is a secondary: it writes the rows a
 * derivation makes, which cannot be read back as raw, so its descriptor
 * says `write-only`. The primary-raw role is `ZerobusRawSink`'s
 * (zerobus-raw-sink.ts), which writes raw table rows through this sink and
 * reads them back through Iceberg.
 */
export class ZerobusSink<L extends Lane> implements BatchSink<L> {
  readonly descriptor: SinkDescriptor;
  readonly config: ZerobusConfig;
  private streams: ZerobusStream<L>[];
  private readonly encode: (batch: RecordBatch) => Uint8Array;
  private readonly catalog: Catalog | undefined;
  private readonly live: LiveTable | null;
  private readonly newStream: (i: number, previous?: ZerobusStream<L>) => ZerobusStream<L>;
  private fields: readonly StreamField[] | null;
  /** With a catalog, submits are fitted one at a time: a re-plan must not interleave with a hand-over. */
  private admission: Promise<void> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | null = null;
  /** When each stream was last picked (a use counter), for the tie-break. */
  private readonly lastUsed: number[] = [];
  private uses = 0;

  constructor(deps: ZerobusSinkDeps<L>) {
    this.config = parseZerobusConfig(deps.config);
    const log = deps.log ?? ((line: string) => console.info(line));
    const debug = deps.debug ?? (() => undefined);
    for (const line of describeConfig(this.config))
      debug(`thalweg sink-zerobus ${deps.id}: ${line}`);
    this.descriptor = {
      id: deps.id,
      kind: 'zerobus',
      durability: { kind: 'server-ack' },
      recovery: {
        kind: 'write-only',
        reason:
          'this sink writes derived rows, which cannot be replayed; for Zerobus as primary raw use ZerobusRawSink (zerobusRaw), which writes raw table rows and reads them back through Iceberg',
      },
    };
    this.encode = deps.encode ?? encodeIpcStream;
    if (deps.fields !== undefined && deps.schema !== undefined) {
      throw new ZerobusSinkError(
        'fatal-config',
        `sink "${deps.id}": both fields and schema are given; give one (the fields are derived from the schema)`,
      );
    }
    const fields = deps.schema === undefined ? deps.fields : streamFieldsOf(deps.schema);
    if (fields === undefined && deps.catalog === undefined) {
      throw new ZerobusSinkError(
        'fatal-config',
        `sink "${deps.id}": give fields, a schema, or a catalog to read the fields from`,
      );
    }
    this.fields = fields ?? null;
    this.catalog = deps.catalog;
    const after = deps.redescribeAfterMs;
    if (after !== undefined && !(Number.isFinite(after) && after > 0))
      throw new ZerobusSinkError(
        'fatal-config',
        `sink "${deps.id}": redescribeAfterMs must be a positive number of ms, not ${after}`,
      );
    this.live =
      deps.catalog === undefined
        ? null
        : new LiveTable({
            catalog: deps.catalog,
            table: this.config.table,
            declared: fields ?? null,
            properties: deps.tableProperties ?? {},
            ...(deps.redescribeAfterMs === undefined
              ? {}
              : { redescribeAfterMs: deps.redescribeAfterMs }),
            clock: deps.clock ?? monotonicClock,
            ...(deps.onDescribed === undefined ? {} : { onDescribed: deps.onDescribed }),
          });
    const spec = (): StreamSpec => ({ table: this.config.table, fields: this.fields ?? [] });
    this.newStream = (i, previous) =>
      new ZerobusStream<L>({
        sink: deps.id,
        name: `${deps.id}-${i}`,
        stream: String(i),
        spec,
        factory: deps.factory,
        target: deps.confirm,
        channelCapacity: this.config.channelCapacity,
        retry: this.config.retry,
        rebuild: this.config.rebuild,
        onConfirmFailure: (e) =>
          log(
            `thalweg sink-zerobus ${deps.id}: confirmation target failed (coverage lags): ${String(e)}`,
          ),
        onRebuild: (attempt, cause) =>
          log(
            `thalweg sink-zerobus ${deps.id}: stream ${deps.id}-${i} died, rebuilding it (attempt ${attempt} in a row) to replay what it had not confirmed: ${String(cause)}`,
          ),
        ...(previous === undefined ? {} : { metrics: previous.metrics }),
      });
    this.streams = Array.from({ length: poolSize(this.config) }, (_, i) => this.newStream(i));
  }

  /**
   * Queues one batch on a stream. An encoded batch (a worker thread's
   * derivation's IPC bytes) is sent as it is; with a catalog it is decoded
   * here to be fitted to the live table, and re-encoded only when fitting
   * changed it.
   */
  async submit(batch: ArrowBatch, span: OffsetSpan, confirm: Confirm<L>): Promise<void> {
    this.refuseIfClosed();
    if (batch.numRows === 0)
      throw new ZerobusSinkError(
        'poison-batch',
        `an empty batch for ${span.topic}/${span.partition} cannot be ingested`,
      );
    if (this.live === null) {
      const ipc = isEncodedBatch(batch) ? batch.ipc : this.encode(batch);
      await this.pick().submit(ipc, span, confirm, batch.numRows);
      return;
    }
    const live = this.live;
    const decoded = isEncodedBatch(batch) ? decodeEncoded(batch) : batch;
    const handed = this.admission.then(async () => {
      const fitted = await live.fit(decoded);
      // close() may have run while the catalog was read: nothing is accepted after it.
      this.refuseIfClosed();
      if (fitted.changed) await this.replan();
      else this.fields = live.columns;
      // …or while the re-plan drained the old pool (then it opened no new one).
      this.refuseIfClosed();
      // Handed over synchronously, so the next admission (maybe a re-plan) sees it queued.
      const same = isEncodedBatch(batch) && fitted.batch === decoded;
      const ipc = same ? batch.ipc : this.encode(fitted.batch);
      // Wrapped so the admission waits for the hand-over only, not for the acceptance.
      return { accepted: this.pick().submit(ipc, span, confirm, fitted.batch.numRows) };
    });
    this.admission = handed.then(
      () => undefined,
      () => undefined,
    );
    await (
      await handed
    ).accepted;
  }

  /**
   * Whether the live table may hold the primary-raw role, as far as its
   * properties go: registered, Iceberg reads and column mapping on, protocol
   * versions high enough, deletion vectors off. Describes the table on every
   * call, never cached (a property can be flipped under a running
   * pipeline), and refuses naming the first failing property.
   * `ZerobusRawSink` runs it at open and before each recovery pass.
   */
  async checkRawPreconditions(): Promise<TableDescription> {
    if (this.catalog === undefined)
      throw new ZerobusSinkError(
        'fatal-config',
        `primary-raw refused for ${this.config.table}: sink "${this.descriptor.id}" has no catalog to describe the table with`,
      );
    return checkPrimaryRawPreconditions(this.catalog, this.config.table);
  }

  async flush(): Promise<void> {
    await Promise.all(this.streams.map((s) => s.flush()));
  }

  /** Idempotent: every call gets the one close, its wait and its outcome. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      const results = await Promise.allSettled(this.streams.map((s) => s.close()));
      for (const r of results) {
        if (r.status === 'rejected')
          throw r.reason instanceof Error ? r.reason : new Error(String(r.reason));
      }
    })();
    return this.closing;
  }

  progress(): StreamProgress[] {
    return this.streams.flatMap((s, i) => {
      const w = s.watermarks;
      return w === null
        ? []
        : [
            {
              stream: `${this.descriptor.id}-${i}`,
              submitted: w.submittedHighWater,
              delivered: w.deliveredHighWater,
              pending: w.pending,
            },
          ];
    });
  }

  metrics(): StreamMetrics[] {
    return this.streams.map((s) => s.metrics);
  }

  /**
   * One lane per stream of the pool, by its index: the stream's metrics,
   * which outlive the lanes its rebuilds replace.
   */
  lanes(): readonly LaneMetrics[] {
    return this.streams.map((s, i) => ({ stream: String(i), metrics: s.metrics }));
  }

  /** The pool's totals and each stream's own, as plain data (from `metrics()`). */
  stats(): ZerobusSinkStats {
    return zerobusSinkStats(this.config.table, this.metrics());
  }

  private refuseIfClosed(): void {
    if (this.closed)
      throw new ZerobusSinkError('fatal-config', `sink "${this.descriptor.id}" is closed`);
  }

  /**
   * The table's columns changed: every batch handed to the current pool is
   * delivered on it (close flushes), then a new pool, opened with the new
   * columns, takes over, carrying each stream's metrics on.
   */
  private async replan(): Promise<void> {
    const old = this.streams;
    try {
      const results = await Promise.allSettled(old.map((s) => s.close()));
      for (const r of results) if (r.status === 'rejected') throw r.reason;
    } finally {
      this.fields = this.live?.columns ?? this.fields;
      // A close() meanwhile closed (or is closing) the old pool; nothing may open after it.
      if (!this.closed) this.streams = old.map((s, i) => this.newStream(i, s));
    }
  }

  /**
   * The stream owing the fewest confirmations, and among equals the one
   * used longest ago: its wait began earliest, so it is the likeliest to be
   * free of the binding's per-stream lock. Spreads load so waits overlap.
   */
  private pick(): ZerobusStream<L> {
    let best = -1;
    for (let i = 0; i < this.streams.length; i++) {
      const s = this.streams[i];
      const b = this.streams[best];
      if (s === undefined) continue;
      if (
        b === undefined ||
        s.unconfirmedCount < b.unconfirmedCount ||
        (s.unconfirmedCount === b.unconfirmedCount &&
          (this.lastUsed[i] ?? 0) < (this.lastUsed[best] ?? 0))
      ) {
        best = i;
      }
    }
    const chosen = this.streams[best];
    if (chosen === undefined)
      throw new ZerobusSinkError('fatal-config', 'the stream pool is empty');
    this.lastUsed[best] = ++this.uses;
    return chosen;
  }
}

/** An encoded batch as a RecordBatch, to fit it to the live table; bytes that do not decode are poison. */
function decodeEncoded(batch: EncodedBatch): RecordBatch {
  try {
    return decodeIpcStream(batch.ipc);
  } catch (error) {
    throw new ZerobusSinkError(
      'poison-batch',
      `an encoded batch does not decode: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}
