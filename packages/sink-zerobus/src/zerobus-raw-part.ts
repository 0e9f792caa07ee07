import type { RawPart } from '@thalweg/connector-core';
import type { Catalog } from './catalog/catalog.js';
import { parseZerobusConfig, type ZerobusConfigInput } from './config.js';
import type { TransportFactory } from './transport.js';
import { ZerobusRawSink, type RawReadBack } from './zerobus-raw-sink.js';
import type { ZerobusSinkStats } from './zerobus-stats.js';

/** Zerobus as the primary raw, declared: the table, its catalog, the transport and the way back. */
export interface ZerobusRawPartOptions extends ZerobusConfigInput {
  /** Opens the streams: `fakeZerobus(...)` in tests, the binding's `SdkTransportFactory` in production. */
  readonly transport: TransportFactory;
  /** Describes the table (its properties are re-checked, never cached) and creates it when missing. */
  readonly catalog: Catalog;
  /**
   * How raw is read back: `new IcebergRaw({ source, namespace, table })`
   * of @thalweg/iceberg, over the catalog's Iceberg REST endpoint for the
   * same table.
   */
  readonly readBack: RawReadBack;
  /** See `ZerobusRawSinkDeps.recheckAfterMs` (default 30 s). */
  readonly recheckAfterMs?: number;
  /** See `ZerobusRawSinkDeps.visibleWithinMs` (default 10 minutes). */
  readonly visibleWithinMs?: number;
  /** The sink id (default `raw`). */
  readonly id?: string;
}

/**
 * The primary-raw part of a topology over Zerobus (ADR 0039): opened with
 * the topology's context, it opens a `ZerobusRawSink` (creating the table
 * when missing, refusing one whose properties do not allow Iceberg reads).
 * It has no local directory, so the topology must be given a coverage
 * store that every process reaches (PostgreSQL, S3): a recovery process on
 * another machine reads raw back through Iceberg alone.
 */
export function zerobusRaw(options: ZerobusRawPartOptions): RawPart<ZerobusSinkStats> {
  const { transport, catalog, readBack, recheckAfterMs, visibleWithinMs, id, ...config } = options;
  // Refused at declaration, naming the key, rather than when the topology opens.
  parseZerobusConfig(config);
  return {
    role: 'primary-raw',
    ...(id === undefined ? {} : { id }),
    async open(context) {
      const sink = await ZerobusRawSink.open({
        id: context.id,
        cluster: context.cluster,
        config,
        catalog,
        factory: transport,
        confirm: context.confirm,
        readBack,
        ...(recheckAfterMs === undefined ? {} : { recheckAfterMs }),
        ...(visibleWithinMs === undefined ? {} : { visibleWithinMs }),
        clock: context.clock,
        log: context.log.info,
        debug: context.log.debug,
      });
      return { sink, stats: () => sink.stats() };
    },
  };
}
