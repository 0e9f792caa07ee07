import { FlowControlError } from './flow-control-errors.js';
import type { QuarantineLaneConfig } from './quarantine-lane-config.js';

/**
 * Why a record left the clean path. `oversized` is the byte budget's refusal
 * of a record larger than it can grant; the other four are the issue's.
 */
export const QUARANTINE_REASONS = [
  'decode',
  'contract',
  'dq',
  'retry-exhausted',
  'oversized',
] as const;

export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

export interface QuarantineEntry<T> {
  readonly reason: QuarantineReason;
  readonly record: T;
  /** Size the entry holds in memory, counted against `maxBytes`. */
  readonly bytes: number;
  readonly detail?: string;
}

/** What became of an offer. There is no third outcome: an offer never waits. */
export type QuarantineOffer = 'queued' | 'shed';

export interface QuarantineShed {
  readonly reason: QuarantineReason;
  /** Shed so far for this reason, this one included. */
  readonly shedForReason: number;
  readonly shedTotal: number;
}

export interface QuarantineLaneHooks {
  /** Called on every shed entry, synchronously: rate-limit the logging, never the count. */
  readonly onShed?: (event: QuarantineShed) => void;
}

export interface QuarantineLaneStats {
  readonly capacity: number;
  readonly depth: number;
  readonly heldBytes: number;
  readonly offered: number;
  readonly shed: Readonly<Record<QuarantineReason, number>>;
  readonly shedTotal: number;
}

interface Taker<T> {
  readonly resolve: (entry: QuarantineEntry<T>) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/**
 * A bounded buffer between the pipeline and the quarantine (DLQ) writer,
 * apart from everything the clean path uses. `offer` is synchronous and
 * returns at once; when the buffer is full the entry is shed and counted per
 * reason, and the clean path never notices.
 *
 * Shedding loses nothing durable: the gating sink (raw) already holds every
 * record, and the quarantine view is a convenience that recovery can
 * rehydrate from raw. Quarantine never gates the source position.
 */
export class QuarantineLane<T> {
  private readonly ring: (QuarantineEntry<T> | undefined)[];
  private start = 0;
  private depth = 0;
  private heldBytes = 0;
  private offered = 0;
  private shedTotal = 0;
  // Indexed by the reason's position in QUARANTINE_REASONS: the shed path is
  // the one that runs flat out during an overflow, so no keyed property store.
  private readonly shedCounts = new Float64Array(QUARANTINE_REASONS.length);
  private takers: Taker<T>[] = [];

  constructor(
    private readonly config: QuarantineLaneConfig,
    private readonly hooks: QuarantineLaneHooks = {},
  ) {
    this.ring = new Array<QuarantineEntry<T> | undefined>(config.capacity).fill(undefined);
  }

  offer(entry: QuarantineEntry<T>): QuarantineOffer {
    // NaN would slip past every bound check and disable the byte bound for good.
    if (!(entry.bytes >= 0) || !Number.isSafeInteger(entry.bytes)) {
      throw new FlowControlError(
        'TWG_BUDGET_AMOUNT_INVALID',
        `quarantine entry bytes: expected a non-negative safe integer, got ${String(entry.bytes)}`,
      );
    }
    this.offered += 1;
    const taker = this.takers.shift();
    if (taker !== undefined) {
      taker.signal?.removeEventListener('abort', taker.onAbort);
      taker.resolve(entry);
      return 'queued';
    }
    if (
      this.depth === this.config.capacity ||
      this.heldBytes + entry.bytes > this.config.maxBytes
    ) {
      // Drop the newcomer: the entries already held keep their order, and the
      // count by reason is exact.
      this.shedTotal += 1;
      const index = reasonIndex(entry.reason);
      const shedForReason = (this.shedCounts[index] ?? 0) + 1;
      this.shedCounts[index] = shedForReason;
      try {
        this.hooks.onShed?.({ reason: entry.reason, shedForReason, shedTotal: this.shedTotal });
      } catch {
        // An observer's failure must not reach the clean path; the counts above stand.
      }
      return 'shed';
    }
    this.ring[(this.start + this.depth) % this.config.capacity] = entry;
    this.depth += 1;
    this.heldBytes += entry.bytes;
    return 'queued';
  }

  /** The oldest held entry, if any: for a writer that polls. */
  poll(): QuarantineEntry<T> | undefined {
    if (this.depth === 0) return undefined;
    const entry = this.ring[this.start];
    this.ring[this.start] = undefined;
    this.start = (this.start + 1) % this.config.capacity;
    this.depth -= 1;
    if (entry !== undefined) this.heldBytes -= entry.bytes;
    return entry;
  }

  /** Up to `max` held entries, oldest first. */
  drain(max = Number.POSITIVE_INFINITY): QuarantineEntry<T>[] {
    const out: QuarantineEntry<T>[] = [];
    while (out.length < max) {
      const entry = this.poll();
      if (entry === undefined) break;
      out.push(entry);
    }
    return out;
  }

  /**
   * The next entry for a writer that waits for work. The writer waits here;
   * the pipeline never does, since an offer to a waiting writer is handed
   * over synchronously.
   */
  take(signal?: AbortSignal): Promise<QuarantineEntry<T>> {
    const held = this.poll();
    if (held !== undefined) return Promise.resolve(held);
    if (signal?.aborted === true) return Promise.reject(takeAborted(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.takers = this.takers.filter((t) => t !== taker);
        reject(takeAborted(signal));
      };
      const taker: Taker<T> = { resolve, reject, signal, onAbort };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.takers.push(taker);
    });
  }

  stats(): QuarantineLaneStats {
    return {
      capacity: this.config.capacity,
      depth: this.depth,
      heldBytes: this.heldBytes,
      offered: this.offered,
      shed: {
        decode: this.shedCounts[reasonIndex('decode')] ?? 0,
        contract: this.shedCounts[reasonIndex('contract')] ?? 0,
        dq: this.shedCounts[reasonIndex('dq')] ?? 0,
        'retry-exhausted': this.shedCounts[reasonIndex('retry-exhausted')] ?? 0,
        oversized: this.shedCounts[reasonIndex('oversized')] ?? 0,
      },
      shedTotal: this.shedTotal,
    };
  }
}

function reasonIndex(reason: QuarantineReason): number {
  switch (reason) {
    case 'decode':
      return 0;
    case 'contract':
      return 1;
    case 'dq':
      return 2;
    case 'retry-exhausted':
      return 3;
    case 'oversized':
      return 4;
  }
}

function takeAborted(signal: AbortSignal | undefined): FlowControlError {
  return new FlowControlError(
    'TWG_QUARANTINE_WAIT_ABORTED',
    'the quarantine writer stopped waiting for an entry',
    signal?.reason,
  );
}
