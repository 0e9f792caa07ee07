import { memoryShare, type RawPart, type SinkContext } from '@thalweg/connector-core';
import { DEFAULT_QUEUED_BYTES, type RawSegmentSinkOptions, type RawSinkEvent } from './options.js';
import { RawSegmentSink, type RawSinkStats } from './raw-segment-sink.js';
import type { SegmentFormat } from './segment-format.js';

/**
 * What `rawSegments` takes: the sink's options without what the topology
 * gives every part (the id, the source's cluster, the confirm target, the
 * logger).
 */
export interface RawSegmentsPartOptions extends Omit<
  RawSegmentSinkOptions,
  'id' | 'cluster' | 'confirm' | 'log'
> {
  /** The sink id (default `raw`). */
  readonly id?: string;
  /**
   * Where coverage is kept when the topology is given no store: LevelDB in
   * this directory. Default: `<dir>-coverage`, next to raw (ADR 0029).
   */
  readonly coverageDir?: string;
  /** How each file holds its batches (segment-format.ts). Default: Arrow IPC segments. */
  readonly format?: SegmentFormat;
}

/**
 * Durable Arrow IPC segments in a local directory as the primary-raw part
 * of a topology (`openTopology` in @thalweg/pipeline). The cluster recorded
 * in every segment is the source's. Without a `maxQueuedBytes`, its queue
 * holds at most an eighth of the topology's memory limit, at most 128 MiB.
 * The sink's settings are logged once at
 * debug level; write retries and failed confirmations go to the topology's
 * log.
 */
export function rawSegments(options: RawSegmentsPartOptions): RawPart<RawSinkStats> {
  const { id, coverageDir, format, ...sinkOptions } = options;
  return {
    role: 'primary-raw',
    ...(id === undefined ? {} : { id }),
    coverageHome: coverageDir ?? `${options.dir.replace(/[\\/]+$/, '')}-coverage`,
    async open(context: SinkContext<'primary-raw'>) {
      const sink = await RawSegmentSink.open(
        {
          ...sinkOptions,
          maxQueuedBytes:
            sinkOptions.maxQueuedBytes ??
            memoryShare(context.memoryLimitBytes, 8, DEFAULT_QUEUED_BYTES),
          id: context.id,
          cluster: context.cluster,
          confirm: context.confirm,
          log: context.log.debug,
          onError: (event) => {
            options.onError?.(event);
            context.log.info(`thalweg sink-files ${context.id}: ${describeEvent(event)}`);
          },
        },
        format === undefined ? {} : { format },
      );
      return { sink, stats: () => sink.stats() };
    },
  };
}

function describeEvent(event: RawSinkEvent): string {
  switch (event.kind) {
    case 'confirm-failed':
      return `confirmation target failed for ${event.span.topic}/${event.span.partition} (the position lags): ${String(event.error)}`;
    case 'write-retry':
      return `segment write ${event.file} failed (attempt ${event.attempt}, retried): ${String(event.error)}`;
    case 'failed':
      return `failed: ${event.error.message}`;
  }
}
