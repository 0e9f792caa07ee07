import { ArrowBatchError } from './errors.js';

/** Size and age bounds of a batch at factor 1. */
export interface BatcherLimits {
  /** Flush when a batch holds this many records. */
  readonly maxRows: number;
  /** Flush before a record would take a batch past this many bytes. */
  readonly maxBytes: number;
  /** Flush a batch this long after its first record arrived. */
  readonly maxAgeMs: number;
}

/** Any clock with a millisecond `now()`; connector-core's flow-control clocks fit. */
export interface BatcherClock {
  now(): number;
}

export type FlushReason = 'rows' | 'bytes' | 'age' | 'drain';

export interface FlushedBatch<T> {
  readonly items: readonly T[];
  /** The sum of the byte sizes given with the items: what the byte budget releases. */
  readonly bytes: number;
  readonly reason: FlushReason;
  readonly openedAt: number;
  readonly flushedAt: number;
  /** The factor in force when the batch opened, and the targets it gave. */
  readonly factor: number;
  readonly targetRows: number;
  readonly targetBytes: number;
}

interface OpenBatch<T> {
  readonly items: T[];
  bytes: number;
  readonly openedAt: number;
  readonly factor: number;
  readonly targetRows: number;
  readonly targetBytes: number;
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * Accumulates records into batches and flushes on rows, bytes or age,
 * whichever comes first. A batch never holds more than its row target and
 * never passes its byte target, except a single record larger than the
 * target, which then travels alone.
 *
 * The size targets are `limits x factor`, where the factor is the
 * backpressure state machine's batch factor in (0, 1]: under pressure,
 * smaller batches. A new factor applies from the NEXT batch: the open batch
 * keeps the targets it opened with, so a batch's size is decided once. Age
 * is a latency bound and is not scaled.
 *
 * Byte accounting: every flushed batch reports the exact sum of the sizes
 * its items were added with, so a byte budget charged per record on `add`
 * is released per batch (after its durable confirmation) with nothing lost
 * or counted twice: the sums over all batches equal the sum of all adds.
 *
 * No timers: time comes from the injected clock. `deadline` says when the
 * open batch ages out; the owner calls `poll()` then (and `add` checks age
 * itself first, so a late poll never lets a stale batch grow).
 */
export class AdaptiveBatcher<T> {
  private readonly limits: BatcherLimits;
  private current: number = 1;
  private open: OpenBatch<T> | undefined;

  constructor(
    limits: BatcherLimits,
    private readonly clock: BatcherClock,
  ) {
    this.limits = checkLimits(limits);
  }

  /** Sets the batch factor for batches opened from now on. */
  setFactor(factor: number): void {
    if (!Number.isFinite(factor) || factor <= 0 || factor > 1) {
      throw new ArrowBatchError('TWG_ARROW_BATCHER_CONFIG', `${factor} is not in (0, 1]`, {
        field: 'factor',
      });
    }
    this.current = factor;
  }

  get factor(): number {
    return this.current;
  }

  /** Adds a record of `bytes` bytes; returns the batches this completed (usually none). */
  add(item: T, bytes: number): readonly FlushedBatch<T>[] {
    if (!Number.isSafeInteger(bytes) || bytes < 0) {
      throw new ArrowBatchError('TWG_ARROW_BATCHER_CONFIG', `${bytes} is not a byte size`, {
        field: 'bytes',
      });
    }
    const now = this.clock.now();
    let out: FlushedBatch<T>[] | undefined;
    const emit = (batch: FlushedBatch<T>) => (out ??= []).push(batch);
    let open = this.open;
    if (open !== undefined && this.aged(open, now)) {
      emit(this.flush('age', now));
      open = undefined;
    }
    if (open !== undefined && open.bytes + bytes > open.targetBytes) {
      emit(this.flush('bytes', now));
      open = undefined;
    }
    open ??= this.start(now);
    open.items.push(item);
    open.bytes += bytes;
    if (open.items.length >= open.targetRows) emit(this.flush('rows', now));
    else if (open.bytes >= open.targetBytes) emit(this.flush('bytes', now));
    return out ?? NONE;
  }

  /** Flushes the open batch if it has aged out. */
  poll(): FlushedBatch<T> | undefined {
    const now = this.clock.now();
    return this.open !== undefined && this.aged(this.open, now)
      ? this.flush('age', now)
      : undefined;
  }

  /** Flushes whatever is open (on shutdown, or before a partition is revoked). */
  drain(): FlushedBatch<T> | undefined {
    return this.open === undefined ? undefined : this.flush('drain', this.clock.now());
  }

  /** When the open batch ages out, on the clock's timeline; undefined when none is open. */
  get deadline(): number | undefined {
    return this.open === undefined ? undefined : this.open.openedAt + this.limits.maxAgeMs;
  }

  get bufferedRows(): number {
    return this.open?.items.length ?? 0;
  }

  get bufferedBytes(): number {
    return this.open?.bytes ?? 0;
  }

  private aged(open: OpenBatch<T>, now: number): boolean {
    // The same sum as `deadline`: with fractional clocks (performance.now()),
    // `now - openedAt` at now = deadline can round below maxAgeMs.
    return now >= open.openedAt + this.limits.maxAgeMs;
  }

  private start(now: number): OpenBatch<T> {
    const factor = this.current;
    this.open = {
      items: [],
      bytes: 0,
      openedAt: now,
      factor,
      targetRows: Math.max(1, Math.floor(this.limits.maxRows * factor)),
      targetBytes: Math.max(1, Math.floor(this.limits.maxBytes * factor)),
    };
    return this.open;
  }

  private flush(reason: FlushReason, now: number): FlushedBatch<T> {
    const open = this.open;
    if (open === undefined) throw new Error('flush without an open batch');
    this.open = undefined;
    const { items, bytes, openedAt, factor, targetRows, targetBytes } = open;
    return { items, bytes, reason, openedAt, flushedAt: now, factor, targetRows, targetBytes };
  }
}

function checkLimits(limits: BatcherLimits): BatcherLimits {
  const { maxRows, maxBytes, maxAgeMs } = limits;
  const positiveInt = (value: number, field: string) => {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new ArrowBatchError('TWG_ARROW_BATCHER_CONFIG', `${value} is not a positive integer`, {
        field,
      });
    }
  };
  positiveInt(maxRows, 'maxRows');
  positiveInt(maxBytes, 'maxBytes');
  if (!Number.isFinite(maxAgeMs) || maxAgeMs <= 0) {
    throw new ArrowBatchError(
      'TWG_ARROW_BATCHER_CONFIG',
      `${maxAgeMs} is not a positive duration`,
      {
        field: 'maxAgeMs',
      },
    );
  }
  return Object.freeze({ maxRows, maxBytes, maxAgeMs });
}
