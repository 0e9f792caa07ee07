import type { Lane, Pending } from '@thalweg/connector-core';

/**
 * A batch accepted by the transport and not yet confirmed; its position is
 * the offset the transport gave it. It keeps its IPC payload until
 * confirmation, so that a poisoned stream's unconfirmed batches can be
 * replayed on its replacement without asking the transport for them.
 */
export interface PendingConfirm<L extends Lane> extends Pending<number, L> {
  /** Submission order within the stream, stable across rebuilds (offsets are not). */
  readonly seq: number;
  readonly ipc: Uint8Array;
}
