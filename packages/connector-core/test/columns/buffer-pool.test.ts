import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/columns/buffer-pool.js';

describe('BufferPool', () => {
  it('hands back a given buffer for a batch that fits it, with room to spare on a new one', () => {
    const pool = new BufferPool(1 << 20);
    const first = pool.take(100_000);
    expect(first.byteLength).toBeGreaterThanOrEqual(100_000 * 1.125);
    pool.give(first);
    expect(pool.idleBytes).toBe(first.byteLength);
    expect(pool.take(90_000)).toBe(first);
    expect(pool.idleBytes).toBe(0);
    const other = pool.take(50_000);
    expect(other).not.toBe(first);
  });

  it('takes none more than about twice the size asked, so a small batch pins no large buffer', () => {
    const pool = new BufferPool(1 << 24);
    const large = new ArrayBuffer(1 << 20);
    pool.give(large);
    const small = pool.take(10_000);
    expect(small === large).toBe(false);
    expect(small.byteLength).toBeLessThan(1 << 17);
    expect(pool.take(600_000) === large).toBe(true);
  });

  it('takes none too small, and drops detached buffers and those beyond its bound', () => {
    const pool = new BufferPool(200_000);
    const small = new ArrayBuffer(1000);
    pool.give(small);
    expect(pool.take(5000)).not.toBe(small);
    const detached = new ArrayBuffer(4096);
    structuredClone(detached, { transfer: [detached] });
    pool.give(detached);
    expect(pool.idleBytes).toBe(1000);
    pool.give(new ArrayBuffer(300_000));
    expect(pool.idleBytes).toBe(1000);
  });
});

describe('BufferPool shrinking', () => {
  function clocked() {
    let now = 0;
    const timers: { run: () => void; at: number }[] = [];
    const pool = new BufferPool(1 << 24, {
      idleMs: 1000,
      now: () => now,
      schedule: (run, ms) => timers.push({ run, at: now + ms }),
    });
    /** Moves the clock and fires the timers due by then, as the event loop would. */
    const advance = (ms: number) => {
      now += ms;
      for (let due = timers.findIndex((t) => t.at <= now); due >= 0;) {
        const [timer] = timers.splice(due, 1);
        timer?.run();
        due = timers.findIndex((t) => t.at <= now);
      }
    };
    return { pool, advance, timers };
  }

  it('gives back every buffer of a pool nobody takes from once they were idle for idleMs', () => {
    const { pool, advance, timers } = clocked();
    const buffers = [pool.take(200_000), pool.take(200_000), pool.take(200_000)];
    for (const b of buffers) pool.give(b);
    const held = pool.idleBytes;
    expect(held).toBeGreaterThan(0);
    // One pending trim, not one per buffer given back.
    expect(timers).toHaveLength(1);
    advance(999);
    expect(pool.idleBytes).toBe(held);
    advance(1);
    expect(pool.idleBytes).toBe(0);
    expect(pool.idleBuffers).toBe(0);
    // Nothing idle: nothing left scheduled, so a closed sink's pool is not kept alive by it.
    expect(timers).toHaveLength(0);
  });

  it('under steady use keeps its working set and drops what a burst left behind', () => {
    const { pool, advance } = clocked();
    // A burst: eight buffers out at once, all given back.
    const burst = Array.from({ length: 8 }, () => pool.take(100_000));
    for (const b of burst) pool.give(b);
    expect(pool.idleBuffers).toBe(8);
    // Then steady load: one batch at a time, for longer than idleMs.
    for (let i = 0; i < 40; i++) {
      const b = pool.take(100_000);
      advance(100);
      pool.give(b);
    }
    expect(pool.idleBuffers).toBe(1);
    expect(burst).toContain(pool.take(100_000));
  });

  it('a buffer re-given restarts its idle time', () => {
    const { pool, advance } = clocked();
    const b = pool.take(100_000);
    pool.give(b);
    advance(900);
    expect(pool.take(100_000)).toBe(b);
    pool.give(b);
    advance(900);
    expect(pool.idleBuffers).toBe(1);
    advance(100);
    expect(pool.idleBuffers).toBe(0);
  });
});
