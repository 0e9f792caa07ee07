import { describe, expect, it } from 'vitest';
import { SourceThrottle } from '../../src/flow-control/source-throttle.js';

describe('SourceThrottle', () => {
  it('is open by default: waiting costs nothing', async () => {
    const t = new SourceThrottle();
    expect(t.paused).toBe(false);
    await expect(t.whenOpen()).resolves.toBeUndefined();
  });

  it('parks the source while paused and wakes every parked loop on resume', async () => {
    const t = new SourceThrottle();
    t.pause();
    const woken: number[] = [];
    const a = t.whenOpen().then(() => woken.push(1));
    const b = t.whenOpen().then(() => woken.push(2));
    await Promise.resolve();
    expect(woken).toEqual([]);
    t.resume();
    await Promise.all([a, b]);
    expect(woken).toEqual([1, 2]);
  });

  it('a parked wait can be aborted', async () => {
    const t = new SourceThrottle();
    t.pause();
    const ac = new AbortController();
    const p = t.whenOpen(ac.signal);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'TWG_THROTTLE_WAIT_ABORTED' });
    await expect(t.whenOpen(AbortSignal.abort())).rejects.toMatchObject({
      code: 'TWG_THROTTLE_WAIT_ABORTED',
    });
  });
});
