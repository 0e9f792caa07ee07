import { afterEach, describe, expect, it, vi } from 'vitest';
import { liveMemoryBytes } from '../src/index.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('liveMemoryBytes', () => {
  it('is the heap in use plus array buffers, not RSS nor the heap V8 reserved', () => {
    vi.spyOn(process, 'memoryUsage').mockReturnValue({
      rss: 900,
      heapTotal: 500,
      heapUsed: 300,
      external: 130,
      arrayBuffers: 120,
    });
    expect(liveMemoryBytes()).toBe(420);
  });

  it('reads a usage it is given instead of taking one', () => {
    const usage = { rss: 900, heapTotal: 500, heapUsed: 30, external: 13, arrayBuffers: 12 };
    const taken = vi.spyOn(process, 'memoryUsage');
    expect(liveMemoryBytes(usage)).toBe(42);
    expect(taken).not.toHaveBeenCalled();
  });

  it('reads this process: a live buffer is in it', () => {
    const held = Buffer.alloc(64 * 1024 * 1024, 1);
    expect(liveMemoryBytes()).toBeGreaterThanOrEqual(held.byteLength);
    expect(held[0]).toBe(1);
  });
});
