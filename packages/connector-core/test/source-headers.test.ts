import { describe, expect, it } from 'vitest';
import { headersSize, headerValue, NO_HEADERS, type SourceHeaders } from '../src/index.js';

describe('source headers', () => {
  const headers: SourceHeaders = [
    ['__proto__', Buffer.from('p')],
    ['a', null],
    ['a', Buffer.from('second')],
    ['constructor', Buffer.from('c')],
  ];

  it('reads the first value of a name, null for a header without one, undefined for none', () => {
    expect(headerValue(headers, 'a')).toBeNull();
    expect(Buffer.from(headerValue(headers, '__proto__') ?? []).toString()).toBe('p');
    expect(Buffer.from(headerValue(headers, 'constructor') ?? []).toString()).toBe('c');
    expect(headerValue(headers, 'toString')).toBeUndefined();
    expect(headerValue(NO_HEADERS, 'a')).toBeUndefined();
  });

  it('sizes a list by its names and values', () => {
    expect(headersSize(headers)).toBe(9 + 1 + 1 + 1 + 6 + 11 + 1);
    expect(headersSize(NO_HEADERS)).toBe(0);
    expect(Object.isFrozen(NO_HEADERS)).toBe(true);
  });
});
