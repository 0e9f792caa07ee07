import { describe, expect, it } from 'vitest';
import type { ConsumerPort } from '../src/consumer-port.js';
import { connectWithin } from '../src/connect-within.js';
import { KafkaSourceError } from '../src/errors.js';

function port(parts: Partial<ConsumerPort>): ConsumerPort & { disconnects: number } {
  const p = {
    disconnects: 0,
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: async () => undefined,
    commit: async () => ({ kind: 'applied' as const }),
    seek: () => undefined,
    pause: () => undefined,
    resume: () => undefined,
    disconnect: async () => {
      p.disconnects += 1;
    },
    ...parts,
  };
  return p;
}

const BROKERS = ['10.0.0.1:9092', '10.0.0.2:9092'];

describe('connectWithin', () => {
  it('resolves null when connect and subscribe succeed in time', async () => {
    expect(await connectWithin(port({}), BROKERS, 1_000)).toBeNull();
  });

  it('names every broker when connecting does not finish in time, and disconnects once the attempt settles', async () => {
    let finish!: () => void;
    const p = port({
      connect: () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    });
    const error = await connectWithin(p, BROKERS, 5);
    expect(error?.code).toBe('TWG_KAFKA_BROKER_UNREACHABLE');
    expect(error?.errorClass).toBe('transient');
    expect(error?.message).toContain(
      'no broker of 10.0.0.1:9092, 10.0.0.2:9092 answered within 5 ms',
    );
    finish();
    await expect.poll(() => p.disconnects).toBe(1);
  });

  it('says the subscription was slow when the brokers answered', async () => {
    const p = port({ subscribe: () => new Promise<void>(() => undefined) });
    const error = await connectWithin(p, BROKERS, 5);
    expect(error?.message).toContain(
      'connected to 10.0.0.1:9092, 10.0.0.2:9092, but subscribing took longer',
    );
  });

  it('wraps a failed connect with the brokers, and passes a source error of the client through', async () => {
    const refused = await connectWithin(
      port({ connect: () => Promise.reject(new Error('Closed connection')) }),
      BROKERS,
      1_000,
    );
    expect(refused?.code).toBe('TWG_KAFKA_BROKER_UNREACHABLE');
    expect(refused?.message).toContain(
      'could not connect to any broker of 10.0.0.1:9092, 10.0.0.2:9092: Closed connection',
    );
    const own = new KafkaSourceError('TWG_KAFKA_TOPIC_UNKNOWN', 'no topic "t" exists');
    expect(
      await connectWithin(port({ subscribe: () => Promise.reject(own) }), BROKERS, 1_000),
    ).toBe(own);
    const other = await connectWithin(
      port({ subscribe: () => Promise.reject(new Error('boom')) }),
      BROKERS,
      1_000,
    );
    expect(other?.code).toBe('TWG_KAFKA_CONSUMER_FAILED');
    expect(other?.message).toContain('but could not subscribe: boom');
  });
});
