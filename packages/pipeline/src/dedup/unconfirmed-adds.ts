/**
 * The first occurrences one stream decided but a lookup may not see yet:
 * what lets lookups run ahead of the writes without missing a duplicate
 * inside this process (ADR 0036).
 *
 * Lookups are issued as soon as a piece arrives, while the writes of the
 * pieces decided before it may still be on their way to the shared set. A
 * write is seen by a lookup issued after it confirmed (the sets answer
 * linearizably); one still in flight, or confirmed after the lookup left,
 * may not be. So each write gets an epoch when it settles, each lookup
 * takes the epoch current when it is issued, and a decision consults,
 * beside the set's answer, every write this lookup may have missed. An entry
 * is forgotten once no outstanding lookup predates its settling. A write that
 * failed settles the same way: later lookups miss it, which is a missed
 * dedup, the safe direction.
 */
interface Write {
  readonly ids: Map<string, string>;
  settledAt: number | null;
}

export class UnconfirmedAdds {
  private epoch = 0;
  /** The writes not yet forgettable: their hashes (hash -> first record id), and when each settled. */
  private readonly writes: Write[] = [];
  /** Every held write's hashes, to the latest write holding each (the least settled of them). */
  private readonly index = new Map<string, Write>();
  /** Epochs of the lookups issued and not yet decided, as a multiset. */
  private readonly lookups = new Map<number, number>();

  /** A lookup leaves now: returns its epoch, to pass to `firstId` and `decided`. */
  lookupIssued(): number {
    this.lookups.set(this.epoch, (this.lookups.get(this.epoch) ?? 0) + 1);
    return this.epoch;
  }

  /**
   * The first record id of `hash` among the writes a lookup issued at
   * `epoch` may have missed (in flight, or settled after it left), or null.
   */
  firstId(hash: string, epoch: number): string | null {
    const write = this.index.get(hash);
    if (write === undefined) return null;
    const settled = write.settledAt;
    return settled !== null && settled <= epoch ? null : (write.ids.get(hash) ?? null);
  }

  /** The lookup of `epoch` is decided: writes no outstanding lookup can miss are forgotten. */
  decided(epoch: number): void {
    const left = (this.lookups.get(epoch) ?? 1) - 1;
    if (left === 0) this.lookups.delete(epoch);
    else this.lookups.set(epoch, left);
    this.forget();
  }

  /** A write of `ids` (hash -> first record id) starts; call the result when it settles, either way. */
  writing(ids: Map<string, string>): () => void {
    const write: Write = { ids, settledAt: null };
    this.writes.push(write);
    for (const hash of ids.keys()) this.index.set(hash, write);
    return () => {
      this.epoch += 1;
      write.settledAt = this.epoch;
      this.forget();
    };
  }

  /** Writes held now (for tests and stats). */
  get held(): number {
    return this.writes.length;
  }

  private forget(): void {
    let oldest = Infinity;
    for (const e of this.lookups.keys()) oldest = Math.min(oldest, e);
    for (let i = this.writes.length - 1; i >= 0; i--) {
      const settled = this.writes[i]?.settledAt ?? null;
      // Settled at or before every outstanding lookup's epoch: each of them sees it in the set.
      if (settled === null || settled > oldest) continue;
      const [write] = this.writes.splice(i, 1);
      for (const hash of write?.ids.keys() ?? []) {
        if (this.index.get(hash) === write) this.index.delete(hash);
      }
    }
  }
}
