import { describe, expect, it } from 'vitest';
import { ThalwegError } from '@thalweg/connector-core';
import { classifyPgError, refusedColumn, refusedParameter } from '../src/classify-error.js';

function pgError(code: string, fields: Record<string, string> = {}): Error {
  return Object.assign(new Error(`server said ${code}`), { code, ...fields });
}

describe('classifyPgError', () => {
  it.each([
    ['57P01', 'terminated backend'],
    ['08006', 'connection failure'],
    ['08003', 'connection does not exist'],
    ['40001', 'serialization failure'],
    ['40P01', 'deadlock'],
    ['53300', 'too many connections'],
  ])('retries %s (%s)', (code) => {
    expect(classifyPgError(pgError(code))).toBe('transient');
  });

  it.each([
    ['22P02', 'invalid text representation'],
    ['22003', 'numeric out of range'],
    ['23502', 'not null violation'],
    ['23514', 'check violation'],
  ])('treats %s (%s) as poison', (code) => {
    expect(classifyPgError(pgError(code))).toBe('poison');
  });

  it.each([
    ['42P01', 'undefined table'],
    ['42703', 'undefined column'],
    ['42501', 'insufficient privilege'],
    ['XX000', 'internal error'],
  ])('treats %s (%s) as fatal: every batch would fail', (code) => {
    expect(classifyPgError(pgError(code))).toBe('fatal');
  });

  it('retries socket failures and the connection losses pg reports without a code', () => {
    expect(
      classifyPgError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })),
    ).toBe('transient');
    expect(classifyPgError(new Error('Connection terminated unexpectedly'))).toBe('transient');
    expect(
      classifyPgError(new Error('Client has encountered a connection error and is not queryable')),
    ).toBe('transient');
  });

  it('follows a thalweg error’s class and treats anything unknown as fatal', () => {
    const transient = new ThalwegError({ code: 'X', errorClass: 'transient', message: 'x' });
    const config = new ThalwegError({ code: 'X', errorClass: 'fatal-config', message: 'x' });
    expect(classifyPgError(transient)).toBe('transient');
    expect(classifyPgError(config)).toBe('fatal');
    expect(classifyPgError(new TypeError('undefined is not a function'))).toBe('fatal');
    expect(classifyPgError('a string')).toBe('fatal');
  });
});

describe('refused parameter and column', () => {
  it('reads the parameter from the server’s context line', () => {
    const e = pgError('22P02', { where: "unnamed portal parameter $3 = '...'" });
    expect(refusedParameter(e)).toBe(3);
    expect(refusedParameter(pgError('22P02'))).toBeNull();
  });

  it('reads the column a not-null violation names', () => {
    expect(refusedColumn(pgError('23502', { column: 'label' }))).toBe('label');
    expect(refusedColumn(pgError('23502'))).toBeNull();
  });
});
