// The worker of off-thread.test.ts (run from dist-test/): sums the values it
// is sent, says which thread did, and fails on purpose when asked to.
import { resourceLimits, threadId } from 'node:worker_threads';
// The package by its name: from dist-test/, ../../src is not compiled JS.
import { serveOffThread } from '@thalweg/connector-core';

export interface SumRequest {
  readonly values: Float64Array<ArrayBuffer>;
  /** `throw`: the handler throws; `exit`: the thread dies before answering. */
  readonly fail?: 'throw' | 'exit';
}

export interface SumAnswer {
  readonly sum: number;
  readonly thread: number;
  /** The young generation the thread was started with (its `resourceLimits`). */
  readonly youngGenerationMb?: number;
}

serveOffThread<SumRequest, SumAnswer>((request) => {
  if (request.fail === 'throw') throw new Error('asked to throw');
  if (request.fail === 'exit') process.exit(3);
  let sum = 0;
  for (const v of request.values) sum += v;
  const youngGenerationMb = resourceLimits.maxYoungGenerationSizeMb;
  return {
    answer: {
      sum,
      thread: threadId,
      ...(youngGenerationMb === undefined ? {} : { youngGenerationMb }),
    },
  };
});
