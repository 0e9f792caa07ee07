/**
 * What "durably acknowledged" means for a kind of sink. It is a property of
 * the sink kind, stated in its descriptor, never inferred at run time:
 *
 * - `server-ack`          a remote server confirmed the write is persisted
 *                         (Zerobus, Arrow Flight);
 * - `transaction-commit`  the database committed the transaction holding the
 *                         rows (Postgres);
 * - `flush-close`         the file was written, fsynced, closed and renamed
 *                         into place with its directory fsynced (raw segments).
 */
export type DurableKind = 'server-ack' | 'transaction-commit' | 'flush-close';

export const DURABLE_KINDS: readonly DurableKind[] = [
  'server-ack',
  'transaction-commit',
  'flush-close',
];

export interface DurableGuarantee {
  readonly kind: DurableKind;
}

/**
 * A sink that cannot confirm durability, or a secondary that explicitly gave
 * it up for throughput. `reason` is mandatory so the opt-out is never silent.
 */
export interface NoDurability {
  readonly kind: 'none';
  readonly reason: string;
}

export type Durability = DurableGuarantee | NoDurability;

/** Only the known durable kinds count: an unknown kind from configuration is not durable. */
export function isDurable(d: Durability): d is DurableGuarantee {
  return (DURABLE_KINDS as readonly string[]).includes(d.kind);
}
