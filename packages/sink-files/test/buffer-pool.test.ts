import { describe, expect, it } from 'vitest';
import { BufferPool } from '../src/buffer-pool.js';

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
