import { describe, expect, it } from 'vitest';
import { partitionKey } from '../../src/offset-span.js';
import { PauseSet } from '../../src/source-support/pause-set.js';

const p0 = { topic: 't', partition: 0 };
const p1 = { topic: 't', partition: 1 };

describe('PauseSet', () => {
  it('reports only the transitions, whatever the number of reasons', () => {
    const s = new PauseSet();
    expect(s.add(p0, 'pipeline')).toBe(true);
    expect(s.add(p0, 'queue')).toBe(false);
    expect(s.add(p0, 'queue')).toBe(false);
    expect(s.remove(p0, 'pipeline')).toBe(false); // the queue still holds it
    expect(s.remove(p0, 'pipeline')).toBe(false);
    expect(s.remove(p0, 'queue')).toBe(true);
    expect(s.remove(p0, 'queue')).toBe(false);
    expect(s.paused()).toEqual([]);
  });

  it('removes one reason everywhere and returns what is fetched again', () => {
    const s = new PauseSet();
    s.add(p0, 'queue');
    s.add(p1, 'queue');
    s.add(p1, 'pipeline');
    expect(s.count('queue')).toBe(2);
    expect(s.removeAll('queue')).toEqual([p0]);
    expect(s.has(partitionKey(p1), 'pipeline')).toBe(true);
    expect(s.pausedBy('pipeline')).toEqual([p1]);
    expect(s.paused()).toEqual([p1]);
  });
});
