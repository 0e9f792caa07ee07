import { describe, expect, it } from 'vitest';
import { compiledWorker } from '../../src/off-thread/compiled-worker.js';

describe('compiledWorker', () => {
  it('is beside a compiled module', () => {
    const url = compiledWorker(
      'file:///p/dist/dedup/hash-thread.js',
      'hash-worker.js',
      '../../dist/dedup',
    );
    expect(url.href).toBe('file:///p/dist/dedup/hash-worker.js');
  });

  it('is the compiled one under distDir for a TypeScript module', () => {
    const url = compiledWorker(
      'file:///p/src/dedup/hash-thread.ts',
      'hash-worker.js',
      '../../dist/dedup/',
    );
    expect(url.href).toBe('file:///p/dist/dedup/hash-worker.js');
  });
});
