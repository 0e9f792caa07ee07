/**
 * Recovery-window leases.
 *
 * Recovery replays the coverage gaps of lagging secondaries from raw, split
 * among several workers: a planner cuts the gaps into windows with stable
 * keys (`sink/topic/partition/windowIndex`, aligned to a fixed grid so every
 * planner names a region the same way), and a worker claims a window, renews
 * the lease while it works, and marks the window complete when done.
 *
 * Leases are an efficiency mechanism, not the correctness one. Record ids are
 * deterministic, so a window replayed twice writes duplicates every sink
 * absorbs, and coverage merges by union, so two workers' claims can only add
 * true ranges. What a lease guarantees:
 *
 * - At most one holder at a time *as the store sees it*: a claim, renew,
 *   complete or release is one atomic conditional write, and every new claim
 *   takes a larger fencing `token`, so a previous holder's renew/complete
 *   fails from then on.
 * - Not that a worker stops at once when its lease is lost. A worker whose
 *   lease expired (a pause, a slow replay) keeps working until its next
 *   renew answers null; meanwhile the next claimant has started. This overlap
 *   is tolerated and bounded by the holder's renew interval: renew at a
 *   fraction of the TTL (a third is conventional) and stop when renew fails.
 * - An expired lease nobody has claimed again is still its holder's: renew
 *   and complete succeed, because no other worker can believe it holds the
 *   key (a claim would have changed the token).
 *
 * Clocks: `PostgresLeaseStore` decides expiry on the database clock only, so
 * client skew cannot matter. `S3LeaseStore` has no server clock it can put in
 * a condition, so it uses the clock of the process calling it; clocks must
 * agree within `clockSkewMarginMs`, which must be much smaller than the TTL.
 */
export interface Lease {
  readonly key: string;
  readonly holder: string;
  /** Increases every time the key is claimed anew (a fencing token). */
  readonly token: number;
  /** Milliseconds since the epoch, on the store's clock where it has one. */
  readonly expiresAt: number;
}

export type LeaseState =
  /** Never claimed, released, or forgotten by `clearCompleted`. */
  | { readonly kind: 'free' }
  | { readonly kind: 'held'; readonly lease: Lease }
  /** Its TTL has passed: claimable by anyone, and still renewable by its holder until then. */
  | { readonly kind: 'expired'; readonly lease: Lease }
  | { readonly kind: 'complete'; readonly holder: string; readonly completedAt: number };

export interface LeaseStore {
  /**
   * Claims `key` if free, released or expired (not complete); null if a
   * holder — another or this one — has it live, or it is complete. A claim
   * is never re-entrant: a holder that lost the answer to its own claim
   * waits out the TTL like everyone else.
   */
  claim(key: string, holder: string, ttlMs: number): Promise<Lease | null>;
  /**
   * Extends a lease still held by this holder with this token, to `ttlMs`
   * from now; null if it was lost (expired and claimed by another,
   * released, completed or cleared).
   */
  renew(lease: Lease, ttlMs: number): Promise<Lease | null>;
  /**
   * Marks the key complete for good; false if the lease was lost first.
   * Completing an already completed lease again answers true (a retry after
   * a lost answer).
   */
  complete(lease: Lease): Promise<boolean>;
  /** Gives the key up without completing it (claimable at once). No-op if lost. */
  release(lease: Lease): Promise<void>;
  state(key: string): Promise<LeaseState>;
  /**
   * States of every stored key with this prefix, sorted by key (for the
   * backlog metric and diagnostics). Released keys are listed as free;
   * never-claimed and cleared keys are not stored, so not listed.
   */
  list(prefix: string): Promise<{ key: string; state: LeaseState }[]>;
  /** Forgets completed keys with this prefix (a window re-opens if a new gap appears there later). */
  clearCompleted(prefix: string): Promise<number>;
  close(): Promise<void>;
}
