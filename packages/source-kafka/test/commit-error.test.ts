import { describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import { classifyCommitError } from '../src/commit-error.js';

// The errors are built with kafkajs's own classes, wrapped the way its
// retrier wraps a broker answer (non-retriable errors keep the answer as `cause`).
const { KafkaJSNonRetriableError, KafkaJSProtocolError, KafkaJSNumberOfRetriesExceeded } = kafkajs;

const answer = (type: string, code: number) =>
  new KafkaJSProtocolError({
    message: `broker said ${type}`,
    type,
    code,
    retriable: false,
  } as unknown as Error);

describe('classifyCommitError', () => {
  it.each([
    ['REBALANCE_IN_PROGRESS', 27],
    ['ILLEGAL_GENERATION', 22],
    ['UNKNOWN_MEMBER_ID', 25],
    ['FENCED_INSTANCE_ID', 82],
  ])('reads %s, wrapped by the retrier, as ownership changed', (type, code) => {
    const cause = answer(type, code);
    const wrapped = Object.assign(new KafkaJSNonRetriableError(cause), { cause });
    expect(classifyCommitError(wrapped)).toEqual({
      kind: 'ownership-changed',
      detail: `the broker answered ${type}`,
    });
  });

  it('reads a consumer group that is gone as not running', () => {
    const gone = new KafkaJSNonRetriableError(
      'Consumer group was not initialized, consumer#run must be called first',
    );
    expect(classifyCommitError(gone)).toMatchObject({ kind: 'not-running' });
  });

  it('leaves every other failure to be reported as such', () => {
    const timeout = answer('REQUEST_TIMED_OUT', 7);
    expect(classifyCommitError(timeout)).toBeNull();
    expect(
      classifyCommitError(
        new KafkaJSNumberOfRetriesExceeded(timeout, { retryCount: 5, retryTime: 1 }),
      ),
    ).toBeNull();
    expect(classifyCommitError(new Error('socket hang up'))).toBeNull();
    expect(classifyCommitError('not an error')).toBeNull();
  });
});
