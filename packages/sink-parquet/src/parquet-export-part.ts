import {
  rawAnchor,
  type Confirm,
  type LaneSettings,
  type SecondaryPart,
  type Sink,
  type SinkContext,
  type SourceBatch,
} from '@thalweg/connector-core';
import type { RawSinkStats } from '@thalweg/sink-files';
import { openParquetSink, type ParquetSinkOptions } from './parquet-sink.js';

/** What `parquetExport` takes: the Parquet sink's options without what the topology gives. */
export interface ParquetExportPartOptions extends Omit<
  ParquetSinkOptions,
  'id' | 'cluster' | 'confirm' | 'log'
> {
  /** The secondary's lane between raw and the export (queue bounds, shedding). */
  readonly lane?: LaneSettings;
}

/**
 * The Parquet sink as a secondary: a Parquet export of the raw records, the
 * same files with the same durability as when it is primary raw. Its
 * derivation is the raw batch itself. Each batch's coverage is confirmed
 * only after its file is durable and listed in the directory's manifest,
 * so recovery replays into it what it missed, and a replay of what it holds
 * is absorbed on read (each offset once).
 */
export function parquetExport(
  options: ParquetExportPartOptions,
): SecondaryPart<SourceBatch, RawSinkStats> {
  const { lane, ...sinkOptions } = options;
  return {
    role: 'secondary',
    ...(lane === undefined ? {} : { lane }),
    async open(context: SinkContext<'secondary'>) {
      // The sink confirms in submission order, one confirmation per batch:
      // the coverage tokens wait here in that order for their raw anchors.
      const waiting: { readonly confirm: Confirm<'secondary'> }[] = [];
      const files = await openParquetSink({
        ...sinkOptions,
        id: context.id,
        cluster: context.cluster,
        log: context.log.debug,
        confirm: {
          apply: async (_anchor, receipt) => {
            const next = waiting.shift();
            if (next !== undefined) await context.confirm.apply(next.confirm, receipt);
          },
        },
      });
      const sink: Sink<'secondary', SourceBatch> = {
        descriptor: { ...files.descriptor, kind: 'parquet-export' },
        async submit(batch, span, confirm) {
          const entry = { confirm };
          waiting.push(entry);
          try {
            await files.submit(batch, span, rawAnchor(span));
          } catch (error) {
            // Refused before it was queued: it will never be confirmed.
            const at = waiting.indexOf(entry);
            if (at !== -1) waiting.splice(at, 1);
            throw error;
          }
        },
        flush: () => files.flush(),
        close: () => files.close(),
        pressure: () => files.pressure(),
        lanes: () => files.lanes(),
      };
      return { sink, derive: (batch) => batch, stats: () => files.stats() };
    },
  };
}
