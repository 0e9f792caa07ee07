import { offsetSpan, type SourceBatch } from '@thalweg/connector-core';
import { BufferPool } from '@thalweg/connector-core';
import { batchOf, record } from './helpers.js';

/** A pool whose every buffer is full of 0xff: what a reused buffer can hold. */
export class DirtyPool extends BufferPool {
  constructor() {
    super(0);
  }
  override take(size: number): ArrayBuffer {
    const buffer = super.take(size);
    new Uint8Array(buffer).fill(0xff);
    return buffer;
  }
}

/**
 * 35 records of one partition with holes, null and empty keys, extreme
 * timestamps, a tombstone and repeated headers with a null value.
 */
export function mixedBatch(): SourceBatch {
  return {
    span: offsetSpan('t', 1, 0, 40),
    records: [
      ...batchOf('t', 1, 0, 30).records,
      record(30, { key: null, value: new Uint8Array(0), timestamp: -1_000 }),
      record(31, { timestamp: Number.MIN_SAFE_INTEGER, key: new Uint8Array(0) }),
      record(35, { timestamp: Number.MAX_SAFE_INTEGER, value: new Uint8Array(100).fill(7) }),
      record(36, { value: new Uint8Array(0), tombstone: true }),
      record(39, {
        headers: [
          ['big', new Uint8Array(40).fill(3)],
          ['tiny', new Uint8Array([1])],
          ['big', null],
        ],
      }),
    ],
  };
}
