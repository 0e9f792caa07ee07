import { describe, expect, it } from 'vitest';
import { classifyPgError, isLostConnection } from '../../src/postgres/pg-failure.js';

const withCode = (code: string, message = `server said ${code}`) =>
  Object.assign(new Error(message), { code });

describe('isLostConnection', () => {
  it.each(['57P01', '57P02', '57P03', '08006', '08003', 'ECONNRESET', 'EPIPE'])(
    'says %s is a lost connection',
    (code) => {
      expect(isLostConnection(withCode(code))).toBe(true);
      expect(classifyPgError(withCode(code))).toBe('transient');
    },
  );

  it('reads the losses node-postgres reports without a code', () => {
    expect(isLostConnection(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(
      isLostConnection(new Error('Client has encountered a connection error and is not queryable')),
    ).toBe(true);
  });

  it('does not call a refused or conflicting statement a lost connection', () => {
    for (const code of ['40001', '40P01', '57014', '42P01', '23505', '22P02'])
      expect(isLostConnection(withCode(code, 'connection terminated'))).toBe(false);
    expect(isLostConnection(new Error('syntax error at or near "selec"'))).toBe(false);
    expect(isLostConnection('connection terminated')).toBe(false);
  });
});
