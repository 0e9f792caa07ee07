import { describe, expect, it } from 'vitest';
import { formatSpan, offsetSpan, partitionKey, spanLength } from '../src/offset-span.js';

describe('offset span', () => {
  it('is half-open and non-empty', () => {
    const span = offsetSpan('orders', 2, 10, 15);
    expect(spanLength(span)).toBe(5);
    expect(formatSpan(span)).toBe('orders/2[10,15)');
  });

  it.each([
    ['empty', () => offsetSpan('t', 0, 5, 5), /end: span \[5, 5\) of t\/0 is empty or inverted/],
    ['inverted', () => offsetSpan('t', 0, 6, 5), /end: span \[6, 5\)/],
    [
      'negative start',
      () => offsetSpan('t', 0, -1, 5),
      /start: -1 is not a non-negative safe integer/,
    ],
    [
      'unsafe end',
      () => offsetSpan('t', 0, 0, 2 ** 53 + 2),
      /end: .* is not a non-negative safe integer/,
    ],
    ['fractional', () => offsetSpan('t', 0, 0.5, 2), /start: 0.5/],
    ['negative partition', () => offsetSpan('t', -1, 0, 1), /partition: -1/],
    ['empty topic', () => offsetSpan('', 0, 0, 1), /topic: must not be empty/],
  ])('refuses %s spans with the field named', (_name, make, message) => {
    expect(make).toThrow(message);
  });

  it('gives distinct keys to partitions whose names could run together', () => {
    expect(partitionKey({ topic: 'a1', partition: 1 })).not.toBe(
      partitionKey({ topic: 'a', partition: 11 }),
    );
  });
});
