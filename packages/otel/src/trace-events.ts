import { ROOT_CONTEXT, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { events, type OffsetSpan } from '@thalweg/connector-core';
import { OtelError } from './errors.js';
import { guarded } from './guarded.js';
import { OpenBatches, type OpenBatch } from './open-batches.js';
import { SPAN_ATTRIBUTES as A, SPAN_EVENTS, SPAN_NAMES } from './span-names.js';

export interface TraceEventsOptions {
  /**
   * Batch spans held open at most. A batch whose commit never comes (its
   * partition revoked, the run stopped) would otherwise hold its span
   * forever; past the cap the oldest open span is ended with
   * `thalweg.ended_by = evicted` and counted in `stats().evicted`.
   *
   * @defaultValue 4096
   */
  readonly maxOpenSpans?: number;
}

export interface TraceStats {
  /** Batch spans open now. */
  readonly open: number;
  /** Batch spans ended early because `maxOpenSpans` were open. */
  readonly evicted: number;
}

/** What `traceEvents` started, until `stop`. */
export interface EventTracing {
  /** Unsubscribes and ends the open batch spans (`thalweg.ended_by = stopped`); idempotent. */
  stop(): void;
  stats(): TraceStats;
}

const DEFAULT_MAX_OPEN_SPANS = 4096;

/**
 * Traces what the diagnostics channels tell, with `tracer`: a
 * `thalweg.batch` span per source batch from its `batch-read` to the
 * `committed` event of its partition that covers it (a position at or
 * past its end: raw holds it durably and the source will not send it
 * again), with the `submitted` and `confirmed` events of its offsets, and
 * `quarantined` of one of its records, as span events. Each durable wait
 * is a `thalweg.durable` span of its own (the event names a burst, not a
 * batch), and a rebuilt stream a zero-length `thalweg.stream-rebuilt`.
 *
 * Every span is a root: the channels are published from the pipeline's own
 * loops, whose active context is no request of the application's.
 */
export function traceEvents(tracer: Tracer, options: TraceEventsOptions = {}): EventTracing {
  const max = options.maxOpenSpans ?? DEFAULT_MAX_OPEN_SPANS;
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new OtelError(
      'TWG_OTEL_OPTION_INVALID',
      'maxOpenSpans',
      `${String(max)} is not a positive integer`,
    );
  }
  const open = new OpenBatches<Span>(max);
  const end = (batch: OpenBatch<Span>, by: 'committed' | 'evicted' | 'stopped'): void => {
    batch.value.setAttribute(A.endedBy, by);
    batch.value.end();
  };
  const mark = (span: OffsetSpan, name: string, attributes: Attributes): void => {
    for (const b of open.overlapping(span, span.start, span.end)) {
      b.value.addEvent(name, attributes);
    }
  };
  const root = (name: string, attributes: Attributes, startTime?: number): Span =>
    tracer.startSpan(
      name,
      startTime === undefined ? { attributes } : { attributes, startTime },
      ROOT_CONTEXT,
    );

  const subscriptions = [
    events.batchRead.subscribe(
      guarded('opening a batch span', (e) => {
        const span = root(SPAN_NAMES.batch, {
          ...spanAttributes(e.span),
          [A.records]: e.records,
          [A.bytes]: e.bytes,
        });
        const evicted = open.add(e.span, span);
        if (evicted !== undefined) end(evicted, 'evicted');
      }),
    ),
    events.submitted.subscribe(
      guarded('marking a batch submitted', (e) => {
        mark(e.span, SPAN_EVENTS.submitted, {
          ...spanAttributes(e.span),
          [A.sink]: e.sink,
          [A.lane]: e.lane,
          [A.records]: e.records,
        });
      }),
    ),
    events.confirmed.subscribe(
      guarded('marking a batch confirmed', (e) => {
        mark(e.span, SPAN_EVENTS.confirmed, {
          ...spanAttributes(e.span),
          [A.sink]: e.sink,
          [A.stream]: e.stream,
          [A.records]: e.records,
          [A.latencyMs]: e.latencyMs,
        });
      }),
    ),
    events.committed.subscribe(
      guarded('ending committed batch spans', (e) => {
        for (const b of open.commit(e.partition, e.next)) {
          b.value.setAttribute(A.committedNext, e.next);
          end(b, 'committed');
        }
      }),
    ),
    events.quarantined.subscribe(
      guarded('tracing a quarantined record', (e) => {
        const attributes = {
          [A.sink]: e.sink,
          [A.reason]: e.reason,
          [A.topic]: e.topic,
          [A.partition]: e.partition,
          [A.offset]: e.offset,
        };
        const covering = open.overlapping(e, e.offset, e.offset + 1);
        for (const b of covering) b.value.addEvent(SPAN_EVENTS.quarantined, attributes);
        if (covering.length === 0) root(SPAN_NAMES.quarantined, attributes).end();
      }),
    ),
    events.durable.subscribe(
      guarded('tracing a durable wait', (e) => {
        const attributes = { [A.sink]: e.sink, [A.stream]: e.stream, [A.batches]: e.batches };
        root(SPAN_NAMES.durable, attributes, e.firstSubmittedAt).end(e.durableAt);
      }),
    ),
    events.streamRebuilt.subscribe(
      guarded('tracing a rebuilt stream', (e) => {
        const attributes = { [A.sink]: e.sink, [A.stream]: e.stream, [A.cause]: e.cause };
        root(SPAN_NAMES.streamRebuilt, attributes).end();
      }),
    ),
  ];

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      for (const unsubscribe of subscriptions) unsubscribe();
      for (const b of open.drain()) end(b, 'stopped');
    },
    stats: () => ({ open: open.size, evicted: open.evicted }),
  };
}

function spanAttributes(span: OffsetSpan): Attributes {
  return {
    [A.topic]: span.topic,
    [A.partition]: span.partition,
    [A.offsetStart]: span.start,
    [A.offsetEnd]: span.end,
  };
}
