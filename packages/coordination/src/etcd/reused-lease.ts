/** A lease serves the writes of this long before a new one is granted; keys expire at most this late in etcd. */
export const LEASE_REUSE_MS = 5_000;

/**
 * One etcd lease per TTL, granted for the TTL plus LEASE_REUSE_MS and
 * reused that long, so a set's pieces cost no grant each: their keys never
 * expire early in etcd, at most LEASE_REUSE_MS late (the copies read the
 * writer's expiry anyway).
 */
export class ReusedLease {
  private lease: { id: string; ttlMs: number; grantedAt: number } | null = null;

  constructor(
    /** An etcd lease of `seconds`, its id. */
    private readonly grant: (seconds: number) => Promise<string>,
    private readonly now: () => number,
  ) {}

  async for(ttlMs: number): Promise<string> {
    const now = this.now();
    const l = this.lease;
    if (l !== null && l.ttlMs === ttlMs && now - l.grantedAt < LEASE_REUSE_MS) return l.id;
    const id = await this.grant(Math.ceil((ttlMs + LEASE_REUSE_MS) / 1000));
    this.lease = { id, ttlMs, grantedAt: now };
    return id;
  }
}
