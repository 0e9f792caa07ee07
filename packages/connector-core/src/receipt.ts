import type { DurableKind } from './durability.js';
import type { OffsetSpan } from './offset-span.js';
import type { SinkId } from './sink-id.js';

/**
 * What a sink reports once a batch is confirmed. A receipt with a durable
 * `durability` is the only thing that may move a source position or record
 * coverage; `'none'` comes from secondaries that opted out of durability and
 * never gates anything.
 */
export interface Receipt {
  readonly sink: SinkId;
  readonly span: OffsetSpan;
  readonly durability: DurableKind | 'none';
  readonly records: number;
  readonly bytes: number;
  /** Milliseconds since the epoch when the batch was accepted by the sink. */
  readonly submittedAt: number;
  /** Milliseconds since the epoch when the durable confirmation arrived. */
  readonly confirmedAt: number;
}
