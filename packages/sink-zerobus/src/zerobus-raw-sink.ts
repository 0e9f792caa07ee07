import type {
  Clock,
  Confirm,
  ConfirmTarget,
  HeldPartition,
  LaneMetrics,
  OffsetSpan,
  PrimaryRawDescriptor,
  ReplayableSink,
  SinkId,
  SourceBatch,
} from '@thalweg/connector-core';
import { rawTableBatch, rawTableSchema } from '@thalweg/stream-arrow';
import { fieldsOfSchema } from './arrow-fields.js';
import type { Catalog } from './catalog/catalog.js';
import {
  PRIMARY_RAW_TABLE_PROPERTIES,
  checkPrimaryRawPreconditions,
  rawPreconditionProblem,
} from './catalog/precondition.js';
import type { ZerobusConfigInput } from './config.js';
import { ZerobusSinkError } from './errors.js';
import type { TransportFactory } from './transport.js';
import { ZerobusSink } from './zerobus-sink.js';
import type { ZerobusSinkStats } from './zerobus-stats.js';

/**
 * How raw is read back: what the table holds and its records by offset
 * window. `IcebergRaw` of @thalweg/iceberg is one, over the table's Iceberg
 * metadata; it must never claim a batch it does not see whole.
 */
export interface RawReadBack {
  held(): Promise<readonly HeldPartition[]>;
  read(span: OffsetSpan, signal?: AbortSignal): AsyncIterable<SourceBatch>;
}

export interface ZerobusRawSinkDeps {
  readonly id: SinkId;
  /** The source cluster whose record ids raw's records carry (ADR 0003). */
  readonly cluster: string;
  readonly config: ZerobusConfigInput;
  /** Where the table is described (its properties re-checked) and, when missing, created. */
  readonly catalog: Catalog;
  readonly factory: TransportFactory;
  /** The source position: advanced after the durable ack only. */
  readonly confirm: ConfirmTarget<'primary-raw'>;
  readonly readBack: RawReadBack;
  /**
   * Describe the table again (and re-check its properties) at the next
   * submit once this many ms have passed since the last describe, so a
   * property flipped under a running pipeline stops it within this long
   * even when no recovery pass runs. Default 30 s.
   */
  readonly recheckAfterMs?: number;
  /**
   * How long a committed write may take to show through `readBack` (the
   * table's Iceberg metadata is generated after each Delta commit): what
   * raw acknowledged and does not show yet is a hole only once it stayed
   * unseen this long. Default 10 minutes.
   */
  readonly visibleWithinMs?: number;
  readonly clock?: Clock;
  readonly log?: (line: string) => void;
  readonly debug?: (line: string) => void;
}

/** The raw table rows' stream fields: what a missing table is created with. */
export const ZEROBUS_RAW_FIELDS = fieldsOfSchema(rawTableSchema());

const DEFAULT_RECHECK_MS = 30_000;
const DEFAULT_VISIBLE_WITHIN_MS = 600_000;

/**
 * Zerobus as the primary raw: each source batch goes out as raw table rows
 * (stream-arrow raw-table-rows.ts: the record as delivered, its batch's span
 * and record count) through a `ZerobusSink` of its own, and comes back
 * through `readBack` (Iceberg metadata the table generates after each Delta
 * commit). The table may hold the role only while its properties allow
 * Iceberg reads (precondition.ts). They are checked, never cached:
 *
 * - at `open`, which creates a missing table with the properties that pass;
 * - before every recovery pass (`verifyReadable`, called by the pipeline);
 * - whenever the sink describes the table while writing (at least every
 *   `recheckAfterMs`): a failing property refuses the batch, fatally, so
 *   the pipeline stops naming the property, and the source position never
 *   moves past what the table could no longer give back.
 */
export class ZerobusRawSink implements ReplayableSink<SourceBatch> {
  readonly descriptor: PrimaryRawDescriptor;
  readonly cluster: string;
  private readonly inner: ZerobusSink<'primary-raw'>;
  private readonly table: string;

  private constructor(private readonly deps: ZerobusRawSinkDeps) {
    this.cluster = deps.cluster;
    const after = deps.recheckAfterMs ?? DEFAULT_RECHECK_MS;
    this.inner = new ZerobusSink<'primary-raw'>({
      id: deps.id,
      config: deps.config,
      fields: ZEROBUS_RAW_FIELDS,
      catalog: deps.catalog,
      tableProperties: PRIMARY_RAW_TABLE_PROPERTIES,
      redescribeAfterMs: after,
      ...(deps.clock === undefined ? {} : { clock: deps.clock }),
      factory: deps.factory,
      confirm: deps.confirm,
      onDescribed: (t) => {
        const problem = rawPreconditionProblem(t);
        if (problem !== null)
          throw new ZerobusSinkError(
            'fatal-config',
            `primary-raw refused for ${t.name} while writing: ${problem}`,
          );
      },
      ...(deps.log === undefined ? {} : { log: deps.log }),
      ...(deps.debug === undefined ? {} : { debug: deps.debug }),
    });
    this.table = this.inner.config.table;
    this.descriptor = {
      id: deps.id,
      kind: 'zerobus',
      durability: { kind: 'server-ack' },
      recovery: {
        kind: 'readable',
        visibleWithinMs: deps.visibleWithinMs ?? DEFAULT_VISIBLE_WITHIN_MS,
      },
    };
  }

  /**
   * Creates the table from the raw fields when the catalog does not have
   * it, then refuses (fatal-config, naming the property) unless it may hold
   * the primary-raw role.
   */
  static async open(deps: ZerobusRawSinkDeps): Promise<ZerobusRawSink> {
    const sink = new ZerobusRawSink(deps);
    try {
      if ((await deps.catalog.describe(sink.table)) === null)
        await deps.catalog.ensureTable(
          sink.table,
          ZEROBUS_RAW_FIELDS,
          PRIMARY_RAW_TABLE_PROPERTIES,
        );
      await sink.verifyReadable();
    } catch (error) {
      await sink.close().catch(() => undefined);
      throw error;
    }
    return sink;
  }

  async submit(
    batch: SourceBatch,
    span: OffsetSpan,
    confirm: Confirm<'primary-raw'>,
  ): Promise<void> {
    await this.inner.submit(rawTableBatch(batch), span, confirm);
  }

  /** The table's live properties still allow the role (described now, never cached). */
  async verifyReadable(): Promise<void> {
    await checkPrimaryRawPreconditions(this.deps.catalog, this.table);
  }

  held(): Promise<readonly HeldPartition[]> {
    return this.deps.readBack.held();
  }

  read(span: OffsetSpan, signal?: AbortSignal): AsyncIterable<SourceBatch> {
    return this.deps.readBack.read(span, signal);
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  lanes(): readonly LaneMetrics[] {
    return this.inner.lanes();
  }

  stats(): ZerobusSinkStats {
    return this.inner.stats();
  }
}
