import { Counter, Histogram, type DeliveryMetrics } from '@thalweg/connector-core';

/** A snapshot of what one sink has done, for its destination's metrics. */
export interface PostgresSinkStats {
  /** Batches committed (each confirmed after its commit). */
  readonly batches: number;
  /** Transactions committed. */
  readonly transactions: number;
  /** Rows the commits added. */
  readonly inserted: number;
  /** Rows already present (a replay, or a retry of a commit whose reply was lost). */
  readonly duplicates: number;
  /** Transaction attempts retried after a transient failure. */
  readonly retries: number;
  /** Batches PostgreSQL refused (22xxx, 23xxx). */
  readonly poisoned: number;
  /** Batches set aside because their transaction failed through every retry. */
  readonly retriesExhausted: number;
  /** Confirmation targets that threw after a commit (coverage lags). */
  readonly confirmFailures: number;
  /** Batches accepted and not yet taken by the writer. */
  readonly queued: number;
  /** Batches per committed transaction: >1 under load means batches are grouped. */
  readonly batchesPerTransaction: { readonly mean: number; readonly max: number };
}

/**
 * The counters behind `PostgresSink.stats()`, owned by one sink: nothing is
 * shared between sinks. Retries and confirmation failures are the ack lane's
 * (`DeliveryMetrics`), read at the snapshot.
 */
export class SinkCounters {
  readonly batches = new Counter();
  readonly transactions = new Counter();
  readonly inserted = new Counter();
  readonly duplicates = new Counter();
  readonly poisoned = new Counter();
  readonly retriesExhausted = new Counter();
  readonly batchesPerTransaction = Histogram.exponential(4096);

  snapshot(queued: number, delivery: DeliveryMetrics): PostgresSinkStats {
    const h = this.batchesPerTransaction;
    return {
      batches: this.batches.value,
      transactions: this.transactions.value,
      inserted: this.inserted.value,
      duplicates: this.duplicates.value,
      retries: delivery.retries.value,
      poisoned: this.poisoned.value,
      retriesExhausted: this.retriesExhausted.value,
      confirmFailures: delivery.confirmFailures.value,
      queued,
      batchesPerTransaction: { mean: h.count === 0 ? 0 : h.sum / h.count, max: h.max ?? 0 },
    };
  }
}
