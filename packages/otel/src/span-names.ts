/** The spans `traceEvents` starts, by name. */
export const SPAN_NAMES = {
  /** One source batch, from its read to the commit of a position past it. */
  batch: 'thalweg.batch',
  /** One durable wait of a sink's lane, from its oldest batch's acceptance to durable. */
  durable: 'thalweg.durable',
  /** A record quarantined while no batch span covering it was open (zero length). */
  quarantined: 'thalweg.quarantined',
  /** A sink's stream that died and was built again (zero length). */
  streamRebuilt: 'thalweg.stream-rebuilt',
} as const;

/** The events on a batch span, by name. */
export const SPAN_EVENTS = {
  submitted: 'submitted',
  confirmed: 'confirmed',
  quarantined: 'quarantined',
} as const;

/** Every attribute `traceEvents` sets, on spans and span events. */
export const SPAN_ATTRIBUTES = {
  topic: 'thalweg.topic',
  partition: 'thalweg.partition',
  /** The first offset of a span, and the one past its last (half-open). */
  offsetStart: 'thalweg.offset.start',
  offsetEnd: 'thalweg.offset.end',
  /** A single record's offset (quarantined). */
  offset: 'thalweg.offset',
  records: 'thalweg.records',
  bytes: 'thalweg.bytes',
  sink: 'thalweg.sink',
  /** `primary-raw` or `secondary`. */
  lane: 'thalweg.lane',
  stream: 'thalweg.stream',
  /** Batches one durable wait covered (its coalesce ratio). */
  batches: 'thalweg.batches',
  latencyMs: 'thalweg.latency_ms',
  reason: 'thalweg.reason',
  cause: 'thalweg.cause',
  /** The committed position that ended a batch span. */
  committedNext: 'thalweg.committed.next',
  /** Why a batch span ended: `committed`, `evicted` (the cap) or `stopped`. */
  endedBy: 'thalweg.ended_by',
} as const;
