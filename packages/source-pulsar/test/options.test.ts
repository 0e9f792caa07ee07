import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OFFSET_LAYOUT,
  parseReaderOptions,
  parseSubscriptionOptions,
} from '../src/index.js';
import { FakePulsarBroker } from './support/fake-pulsar-port.js';

const T = 'persistent://t/ns/orders';
const port = new FakePulsarBroker().port();
const base = { port, cluster: 'c', topics: [T], subscription: 's' };

describe('the options', () => {
  it('fill in the defaults', () => {
    const s = parseSubscriptionOptions(base);
    expect(s).toMatchObject({
      type: 'Exclusive',
      initialPosition: 'Earliest',
      offsetBits: DEFAULT_OFFSET_LAYOUT,
      maxQueuedBatches: 64,
      maxBatchMessages: 500,
      partitionPollMs: 30_000,
    });
    expect(parseReaderOptions({ port, cluster: 'c', topics: [T] }).startAt).toBe('earliest');
  });

  it.each([
    [{ topics: [`${T}-partition-1`] }, 'pulsarSource.topics[0]', /names one partition/],
    [{ topics: [T, T] }, 'pulsarSource.topics[1]', /listed twice/],
    [{ type: 'Fanout' }, 'pulsarSource.type', /Key_Shared/],
    [{ offsetBits: { entryBits: 30, batchBits: 10 } }, 'pulsarSource.offsetBits', /16 of the 53/],
    [{ port: {} }, 'pulsarSource.port', /PulsarPort/],
    [{ maxBatchSize: 3 }, 'pulsarSource.maxBatchSize', /unknown key/],
  ])('refuses %j naming %s', (bad, path, why) => {
    expect(() => parseSubscriptionOptions({ ...base, ...bad })).toThrow(
      expect.objectContaining({ path, message: expect.stringMatching(why) as unknown }),
    );
  });

  it('refuses a subscription on readers', () => {
    expect(() => parseReaderOptions(base)).toThrow(/pulsarSource\.subscription/);
  });
});
