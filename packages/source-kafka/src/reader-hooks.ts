import type { SourcePartition } from '@thalweg/connector-core';
import type { ConsumerEvent } from './consumer-port.js';

/** What a group join changed: the new assignment and the partitions that left and arrived. */
export interface AssignmentChange {
  readonly assignment: readonly SourcePartition[];
  readonly revoked: readonly SourcePartition[];
  readonly assigned: readonly SourcePartition[];
}

/** What a mode adds to the shared reader. Hooks run synchronously inside the client. */
export interface ReaderHooks {
  /** Every client event, before the reader acts on it. */
  readonly event?: (event: ConsumerEvent) => void;
  /**
   * A join ended: revoked partitions are already purged from the queue and
   * no batch of the new assignment has been yielded yet. Throwing ends the source.
   */
  readonly joined: (change: AssignmentChange) => void;
  /** The source will read nothing more (closed, or failed with `error`). */
  readonly ended?: (error: Error | null) => void;
}
