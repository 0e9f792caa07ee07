import type { Confirm, Lane, OffsetSpan } from '@thalweg/connector-core';

/**
 * A batch accepted by the transport and not yet confirmed. It keeps its IPC
 * payload until confirmation, so that a poisoned stream's unconfirmed batches
 * can be replayed on its replacement without asking the transport for them.
 */
export interface PendingConfirm<L extends Lane> {
  /** Submission order within the stream, stable across rebuilds (offsets are not). */
  readonly seq: number;
  readonly offset: number;
  readonly confirm: Confirm<L>;
  readonly span: OffsetSpan;
  readonly records: number;
  readonly bytes: number;
  readonly ipc: Uint8Array;
  readonly submittedAt: number;
}
