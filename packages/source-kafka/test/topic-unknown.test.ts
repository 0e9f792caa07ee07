import { describe, expect, it } from 'vitest';
import { topicUnknown } from '../src/errors.js';

describe('topicUnknown (a subscription the cluster refused)', () => {
  const brokers = ['b1:9092', 'b2:9092'];
  const cause = new Error('This server does not host this topic-partition');

  it('names the topics found missing, and the option that stays off', () => {
    const error = topicUnknown(['orders'], ['orders', 'users'], brokers, 'autocreateTopics', cause);
    expect(error.code).toBe('TWG_KAFKA_TOPIC_UNKNOWN');
    expect(error.message).toBe(
      'TWG_KAFKA_TOPIC_UNKNOWN: no topic "orders" exists on b1:9092, b2:9092; ' +
        'the source never creates topics (autocreateTopics is off)',
    );
    expect(error.cause).toBe(cause);
  });

  it('names every subscribed topic when the missing ones could not be told', () => {
    const error = topicUnknown([], ['orders', 'users'], brokers, 'allowAutoTopicCreation', cause);
    expect(error.message).toContain(
      'the cluster hosts not all of "orders", "users" on b1:9092, b2:9092; ' +
        'the source never creates topics (allowAutoTopicCreation is off)',
    );
  });
});
