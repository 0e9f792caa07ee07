import { describe, expect, it } from 'vitest';
import { UnconfirmedAdds } from '../../src/dedup/unconfirmed-adds.js';

const ids = (...pairs: [string, string][]) => new Map(pairs);

describe('UnconfirmedAdds', () => {
  it('answers for a write in flight to a lookup issued before or after it started', () => {
    const u = new UnconfirmedAdds();
    const before = u.lookupIssued();
    u.writing(ids(['h1', 'r1']));
    const after = u.lookupIssued();
    expect(u.firstId('h1', before)).toBe('r1');
    expect(u.firstId('h1', after)).toBe('r1');
    expect(u.firstId('h2', after)).toBeNull();
  });

  it('keeps a settled write for the lookups that left before it settled, and forgets it after them', () => {
    const u = new UnconfirmedAdds();
    const early = u.lookupIssued();
    const settle = u.writing(ids(['h1', 'r1']));
    settle();
    const late = u.lookupIssued();
    // The early lookup may have missed it in the set; the late one sees it there.
    expect(u.firstId('h1', early)).toBe('r1');
    expect(u.firstId('h1', late)).toBeNull();
    expect(u.held).toBe(1);
    u.decided(late);
    expect(u.held).toBe(1);
    u.decided(early);
    expect(u.held).toBe(0);
  });

  it('holds nothing once every write settled and no lookup is out', () => {
    const u = new UnconfirmedAdds();
    const a = u.writing(ids(['h1', 'r1']));
    const b = u.writing(ids(['h2', 'r2']));
    b();
    expect(u.held).toBe(1);
    a();
    expect(u.held).toBe(0);
  });

  it('counts two lookups of one epoch separately', () => {
    const u = new UnconfirmedAdds();
    const one = u.lookupIssued();
    const two = u.lookupIssued();
    u.writing(ids(['h1', 'r1']))();
    u.decided(one);
    expect(u.firstId('h1', two)).toBe('r1');
    u.decided(two);
    expect(u.held).toBe(0);
  });
});
