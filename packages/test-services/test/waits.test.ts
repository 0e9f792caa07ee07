import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Changes, waitFor } from '../src/index.js';

describe('waitFor', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves once the check turns true, asking again every everyMs', async () => {
    let asked = 0;
    const done = waitFor(() => ++asked === 3, 'the third answer', { everyMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(asked).toBe(2);
    await vi.advanceTimersByTimeAsync(100);
    await expect(done).resolves.toBeUndefined();
    expect(asked).toBe(3);
  });

  it('takes an asynchronous check', async () => {
    let ready = false;
    const done = waitFor(() => Promise.resolve(ready), 'ready');
    await vi.advanceTimersByTimeAsync(50);
    ready = true;
    await vi.advanceTimersByTimeAsync(50);
    await expect(done).resolves.toBeUndefined();
  });

  it('throws at the deadline, naming what it waited for', async () => {
    let asked = 0;
    const done = waitFor(
      () => {
        asked += 1;
        return false;
      },
      'the series',
      { timeoutMs: 1_000, everyMs: 300 },
    );
    const failed = expect(done).rejects.toThrow('timed out after 1000 ms waiting for the series');
    await vi.advanceTimersByTimeAsync(1_000);
    await failed;
    // At 0, 300, 600 and 900 ms, and a last one at the deadline.
    expect(asked).toBe(5);
  });

  it('asks a function what only at the timeout, so it can say where things stood', async () => {
    let last = 0;
    const what = vi.fn(() => `a count of 3 (last ${String(last)})`);
    const done = waitFor(
      () => {
        last += 1;
        return false;
      },
      what,
      { timeoutMs: 200, everyMs: 100 },
    );
    const failed = expect(done).rejects.toThrow(
      'timed out after 200 ms waiting for a count of 3 (last 3)',
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(what).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(100);
    await failed;
    expect(what).toHaveBeenCalledTimes(1);
  });

  it('ends with the error the check threw', async () => {
    await expect(
      waitFor(() => {
        throw new Error('HTTP 500');
      }, 'an answer'),
    ).rejects.toThrow('HTTP 500');
  });
});

describe('Changes', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves at once when the condition already holds, with no poke', async () => {
    await expect(new Changes().until(() => true, 'nothing')).resolves.toBeUndefined();
  });

  it('resolves on the poke that makes the condition hold, not before', async () => {
    const changes = new Changes();
    const seen: number[] = [];
    let resolved = false;
    const done = changes
      .until(() => seen.length === 2, 'two values')
      .then(() => {
        resolved = true;
      });
    seen.push(1);
    changes.poke();
    await Promise.resolve();
    expect(resolved).toBe(false);
    seen.push(2);
    changes.poke();
    await done;
    expect(resolved).toBe(true);
  });

  it('rejects at the deadline, naming what it waited for, and ignores later pokes', async () => {
    vi.useFakeTimers();
    const changes = new Changes();
    let open = false;
    const cond = vi.fn(() => open);
    const done = changes.until(cond, 'the session to open', 500);
    const failed = expect(done).rejects.toThrow(
      'timed out after 500 ms waiting for the session to open',
    );
    await vi.advanceTimersByTimeAsync(499);
    changes.poke();
    await vi.advanceTimersByTimeAsync(1);
    await failed;
    open = true;
    const calls = cond.mock.calls.length;
    changes.poke();
    expect(cond).toHaveBeenCalledTimes(calls);
  });

  it('asks a function what only at the deadline, so the failure says where things stood', async () => {
    vi.useFakeTimers();
    const changes = new Changes();
    let count = 0;
    const what = vi.fn(() => `a count of 3 (last ${String(count)})`);
    const done = changes.until(() => count >= 3, what, 300);
    const failed = expect(done).rejects.toThrow(
      'timed out after 300 ms waiting for a count of 3 (last 2)',
    );
    count = 2;
    changes.poke();
    expect(what).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(300);
    await failed;
    expect(what).toHaveBeenCalledTimes(1);
  });

  it('clears its timer once the condition holds', () => {
    vi.useFakeTimers();
    const changes = new Changes();
    let open = false;
    const done = changes.until(() => open, 'open', 500);
    expect(vi.getTimerCount()).toBe(1);
    open = true;
    changes.poke();
    expect(vi.getTimerCount()).toBe(0);
    return done;
  });

  it('wakes every pending wait on one poke, each on its own condition', async () => {
    const changes = new Changes();
    let n = 0;
    const one = changes.until(() => n >= 1, 'one');
    const two = changes.until(() => n >= 2, 'two');
    n = 2;
    changes.poke();
    await expect(Promise.all([one, two])).resolves.toEqual([undefined, undefined]);
  });

  it('rejects with the error the condition threw on a poke', async () => {
    const changes = new Changes();
    let broken = false;
    const done = changes.until(() => {
      if (broken) throw new Error('bad state');
      return false;
    }, 'a good state');
    broken = true;
    changes.poke();
    await expect(done).rejects.toThrow('bad state');
  });
});
