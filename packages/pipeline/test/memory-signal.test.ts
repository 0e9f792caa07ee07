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

  it('reads this process: a live buffer is in it', () => {
    const held = Buffer.alloc(64 * 1024 * 1024, 1);
    expect(liveMemoryBytes()).toBeGreaterThanOrEqual(held.byteLength);
    expect(held[0]).toBe(1);
  });
});
