import type { Etcd3 } from 'etcd3';
import { CoordinationError } from '../errors.js';
import type { ReusedLease } from './reused-lease.js';

/** Told when `keys` keys added in this process could not be written for the others to read. */
export type Unwritten = (keys: number, error: Error) => void;

/** One piece of a binary set to put: ONE etcd key, on a lease of the TTL. */
export interface PieceWrite {
  /** The piece's number in its set's copy. */
  readonly index: number;
  readonly key: string;
  readonly value: Uint8Array;
  readonly count: number;
  readonly ttlMs: number;
  readonly told: Unwritten | undefined;
}

/** What the set is told of each write once etcd answered. */
export interface WriteOutcome {
  confirmed(w: PieceWrite, revision: number): void;
  failed(w: PieceWrite): void;
}

/** Pieces waiting to be written beyond which a new one is dropped (told as unwritten). */
export const MAX_QUEUED_PIECES = 256;

/**
 * Waits before each further try of a failed write, in ms. A cluster that
 * has just regained its quorum refuses a first request or two while it
 * settles (a new leader, a lease grant), which these absorb; a cluster
 * still down fails them all, and the write is told as unwritten.
 */
export const WRITE_RETRY_MS: readonly number[] = [100, 200, 400, 800];

/** How the writer waits between tries (a test's scheduler replaces it). */
export type Pause = (ms: number) => Promise<void>;

const pause: Pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A binary set's background writes: its pieces put one at a time in the
 * order they were made, so etcd's revisions follow this process's order. A
 * failed put is tried again after each of WRITE_RETRY_MS. A write never
 * throws into the caller: a failure that outlasts those (no quorum, a
 * timeout), a
 * queue past MAX_QUEUED_PIECES or a close with writes not started is told
 * to the write's `told` with the error, and no promise of it is left to
 * reject.
 */
export class PieceWriter {
  private readonly queue: PieceWrite[] = [];
  /** Written or not, by number: until etcd answers. */
  private readonly waiting = new Map<number, PieceWrite>();
  private pumping: Promise<void> | null = null;
  private made = 0;
  private done = 0;
  private waiters: { readonly upTo: number; readonly resolve: () => void }[] = [];
  private closed = false;

  constructor(
    private readonly client: Etcd3,
    private readonly lease: ReusedLease,
    private readonly outcome: WriteOutcome,
    private readonly wait: Pause = pause,
  ) {}

  write(w: PieceWrite): void {
    this.made += 1;
    if (this.closed || this.queue.length >= MAX_QUEUED_PIECES) {
      const why = this.closed
        ? 'the coordination was closed'
        : `${MAX_QUEUED_PIECES} pieces wait to be written`;
      this.fail(w, new CoordinationError('TWG_COORDINATION_UNAVAILABLE', `etcd: ${why}`));
      return;
    }
    this.waiting.set(w.index, w);
    this.queue.push(w);
    this.pumping ??= this.pump();
  }

  /** Whether piece `index` is still to be written (or being written). */
  pending(index: number): boolean {
    return this.waiting.has(index);
  }

  /** The writes etcd has not answered yet, in order. */
  unconfirmed(): Iterable<PieceWrite> {
    return this.waiting.values();
  }

  /** Resolves once every write made so far was answered or failed; never rejects. */
  flushed(): Promise<void> {
    const upTo = this.made;
    if (this.done >= upTo) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /** Drops the writes not started (told as unwritten) and waits for the one in flight. */
  async close(): Promise<void> {
    this.closed = true;
    const dropped = this.queue.splice(0);
    for (const w of dropped) {
      this.waiting.delete(w.index);
      this.fail(w, new CoordinationError('TWG_COORDINATION_CLOSED', 'the coordination was closed'));
    }
    await this.pumping;
  }

  private async pump(): Promise<void> {
    for (let w = this.queue.shift(); w !== undefined; w = this.queue.shift()) {
      let answer = await this.put(w);
      for (const ms of WRITE_RETRY_MS) {
        if (typeof answer === 'number' || this.closed) break;
        await this.wait(ms);
        answer = await this.put(w);
      }
      this.waiting.delete(w.index);
      if (typeof answer !== 'number') {
        this.fail(w, answer);
        continue;
      }
      try {
        this.outcome.confirmed(w, answer);
      } catch {
        // The copy's bookkeeping; the write itself is done.
      }
      this.settle();
    }
    this.pumping = null;
  }

  /** One try: the revision etcd gave the put, or why it failed. */
  private async put(w: PieceWrite): Promise<number | CoordinationError> {
    try {
      const lease = await this.lease.for(w.ttlMs);
      const body = Buffer.from(w.value.buffer, w.value.byteOffset, w.value.byteLength);
      return Number((await this.client.put(w.key).value(body).lease(lease).exec()).header.revision);
    } catch (error) {
      return error instanceof CoordinationError
        ? error
        : new CoordinationError(
            'TWG_COORDINATION_UNAVAILABLE',
            `etcd: writing ${w.count} keys of ${w.key} failed`,
            error,
          );
    }
  }

  private fail(w: PieceWrite, error: Error): void {
    try {
      this.outcome.failed(w);
      w.told?.(w.count, error);
    } catch {
      // A listener's own failure is not the writer's.
    }
    this.settle();
  }

  private settle(): void {
    this.done += 1;
    const done = this.done;
    const ready = this.waiters.filter((w) => w.upTo <= done);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.upTo > done);
    for (const w of ready) w.resolve();
  }
}
