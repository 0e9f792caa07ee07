import type { RecordBatch } from 'apache-arrow';
import type {
  Confirm,
  ConfirmTarget,
  Lane,
  LaneMetrics,
  OffsetSpan,
  SinkDescriptor,
  SinkId,
} from '@thalweg/connector-core';
import {
  encodeIpcStream,
  type BatchSchema,
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
import type { Catalog, TableColumn } from './catalog/catalog.js';
import { reconcileBatch } from './reconcile-apply.js';
import { streamFieldsOf } from './schema-fields.js';
import { zerobusSinkStats, type ZerobusSinkStats } from './zerobus-stats.js';
import { ZerobusStream } from './zerobus-stream.js';

export interface ZerobusSinkDeps<L extends Lane> {
  readonly id: SinkId;
  /** Validated at construction (untyped input too): an unknown key or a bad value is refused naming it. */
  readonly config: ZerobusConfigInput;
  /**
   * The stream schema. With `catalog` instead, it is read from the live
   * table at the first submit, and every batch is reconciled with the
   * table's columns before it is sent (emit-time reconciliation).
   */
  readonly fields?: readonly StreamField[];
  /** The batches' schema, from which the stream fields are derived (`streamFieldsOf`); instead of `fields`. */
  readonly schema?: BatchSchema;
  readonly catalog?: Catalog;
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
 * `submit` returns once a stream's transport accepted the batch; the
 * confirmation is applied by that stream's lane after the durable ack.
 *
 * Zerobus writes Delta; it is a secondary here. Holding the primary-raw role
 * needs the table to be readable back through Iceberg for recovery, checked
 * against live table properties, which this package does not provide yet, so
 * the descriptor says `write-only` and `assertPrimaryRaw` refuses it.
 */
export class ZerobusSink<L extends Lane> implements BatchSink<L> {
  readonly descriptor: SinkDescriptor;
  readonly config: ZerobusConfig;
  private readonly streams: ZerobusStream<L>[];
  private readonly encode: (batch: RecordBatch) => Uint8Array;
  private readonly catalog: Catalog | undefined;
  private fields: readonly StreamField[] | null;
  private columns: Promise<readonly TableColumn[]> | null = null;
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
      recovery: { kind: 'write-only' },
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
    const spec = (): StreamSpec => ({ table: this.config.table, fields: this.fields ?? [] });
    this.streams = Array.from(
      { length: poolSize(this.config) },
      (_, i) =>
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
        }),
    );
  }

  async submit(batch: RecordBatch, span: OffsetSpan, confirm: Confirm<L>): Promise<void> {
    this.refuseIfClosed();
    if (batch.numRows === 0)
      throw new ZerobusSinkError(
        'poison-batch',
        `an empty batch for ${span.topic}/${span.partition} cannot be ingested`,
      );
    const fitted =
      this.catalog === undefined ? batch : reconcileBatch(batch, await this.tableColumns());
    // close() may have run while the catalog was read: nothing is accepted after it.
    this.refuseIfClosed();
    const ipc = this.encode(fitted);
    await this.pick().submit(ipc, span, confirm, fitted.numRows);
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

  /** The live table's columns, read once and used as the stream schema. */
  private tableColumns(): Promise<readonly TableColumn[]> {
    const catalog = this.catalog;
    if (catalog === undefined) return Promise.resolve([]);
    this.columns ??= catalog.describe(this.config.table).then((t) => {
      if (t === null)
        throw new ZerobusSinkError(
          'fatal-config',
          `table ${this.config.table} is not registered in the catalog`,
        );
      this.fields = t.columns;
      return t.columns;
    });
    this.columns.catch(() => (this.columns = null));
    return this.columns;
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
