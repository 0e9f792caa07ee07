import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  OffThread,
  packedValue,
  packRecords,
  packedBuffers,
  WORKER_RESOURCE_LIMITS,
} from '../../src/index.js';
import type { SumAnswer, SumRequest } from './sum-worker.js';

// The compiled worker (`tsc -b` builds the tests into dist-test/).
const entry = new URL('../../dist-test/test/off-thread/sum-worker.js', import.meta.url);

const request = (values: number[], fail?: SumRequest['fail']) => {
  const array = Float64Array.from(values);
  return { request: { values: array, ...(fail === undefined ? {} : { fail }) }, array };
};

/** What the calling thread answers when the worker cannot. */
const here = (values: number[]) => (): SumAnswer => ({
  sum: values.reduce((a, b) => a + b, 0),
  thread: threadId,
});

function thread(lines: string[], at = entry) {
  return new OffThread<SumRequest, SumAnswer>({
    entry: at,
    name: 'test: the sum thread',
    log: (line) => lines.push(line),
  });
}

describe('OffThread', () => {
  it('answers on its own thread, with the buffers transferred rather than copied', async () => {
    const lines: string[] = [];
    const sums = thread(lines);
    const { request: q, array } = request([1, 2, 3]);
    const answer = await sums.run(q, [array.buffer], here([1, 2, 3]));
    expect(answer.sum).toBe(6);
    expect(answer.thread).not.toBe(threadId);
    // Bounded: V8's own default lets a thread's young generation grow to 384 MB on Node 24.
    expect(answer.youngGenerationMb).toBe(WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb);
    expect(array.byteLength).toBe(0); // detached: it went to the thread
    expect(sums.onThread).toBe(true);
    await sums.close();
    expect(lines).toEqual([]);
  });

  it('answers on the calling thread a request the worker threw on, and keeps the worker', async () => {
    const sums = thread([]);
    const thrown = await sums.run(request([4, 5], 'throw').request, [], here([4, 5]));
    expect(thrown).toEqual({ sum: 9, thread: threadId });
    const after = await sums.run(request([7]).request, [], here([7]));
    expect(after.thread).not.toBe(threadId);
    await sums.close();
  });

  it('answers what a dying thread owed on the calling thread, then runs every request there', async () => {
    const lines: string[] = [];
    const sums = thread(lines);
    const owed = await sums.run(request([1, 1], 'exit').request, [], here([1, 1]));
    expect(owed).toEqual({ sum: 2, thread: threadId });
    expect(sums.onThread).toBe(false);
    expect(lines).toEqual([
      'test: the sum thread stopped (exit code 3); running on the calling thread',
    ]);
    expect(await sums.run(request([2]).request, [], here([2]))).toEqual({
      sum: 2,
      thread: threadId,
    });
  });

  it('answers on the calling thread what it still owed when closed', async () => {
    const sums = thread([]);
    // Closed before the new thread could answer: the request is owed.
    const owed = sums.run(request([5, 6]).request, [], here([5, 6]));
    await sums.close();
    expect(await owed).toEqual({ sum: 11, thread: threadId });
    expect(sums.onThread).toBe(false);
  });

  it('runs on the calling thread when the compiled worker is missing, and says so once', async () => {
    const lines: string[] = [];
    const sums = thread(lines, new URL('./no-such-worker.js', entry));
    expect(await sums.run(request([3]).request, [], here([3]))).toEqual({
      sum: 3,
      thread: threadId,
    });
    expect(await sums.run(request([4]).request, [], here([4]))).toEqual({
      sum: 4,
      thread: threadId,
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^test: the sum thread: no compiled worker at .*no-such-worker\.js; running on the calling thread$/,
    );
  });
});

describe('packRecords', () => {
  it('lays out values, tombstones, offsets and timestamps, each value readable as a view', () => {
    const enc = new TextEncoder();
    const packed = packRecords([
      { offset: 7, key: null, value: enc.encode('ab'), timestamp: 1000, headers: [] },
      {
        offset: 9,
        key: null,
        value: new Uint8Array(),
        timestamp: 1001,
        headers: [],
        tombstone: true,
      },
      { offset: 10, key: null, value: enc.encode('cde'), timestamp: 1002, headers: [] },
    ]);
    expect([0, 1, 2].map((i) => new TextDecoder().decode(packedValue(packed, i)))).toEqual([
      'ab',
      '',
      'cde',
    ]);
    expect([...packed.tombstones]).toEqual([0, 1, 0]);
    expect([...packed.offsets]).toEqual([7, 9, 10]);
    expect([...packed.timestamps]).toEqual([1000, 1001, 1002]);
    expect(packedBuffers(packed)).toHaveLength(5);
  });
});
