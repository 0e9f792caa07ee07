import { recordingPartContext } from '@thalweg/contracts';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@thalweg/connector-core';
import { pulsar, PulsarReaderSource, PulsarSubscriptionSource } from '../src/index.js';
import { FakePulsarBroker } from './support/fake-pulsar-port.js';

const T = 'persistent://t/ns/orders';

describe('pulsar(): the source part', () => {
  it('a subscription opens a subscription source, logging its settings at debug', async () => {
    const broker = new FakePulsarBroker().topic(T, 2);
    const { context, debug } = recordingPartContext();
    const part = pulsar({
      port: broker.port(),
      cluster: 'eu',
      topics: [T],
      subscription: 'ingest',
    });
    expect(part.role).toBe('source');
    const source = await part.open(context);
    expect(source).toBeInstanceOf(PulsarSubscriptionSource);
    expect(source.regime).toBe('broker-managed');
    expect(debug).toContain('thalweg source-pulsar: subscription=ingest');
    await source.close();
  });

  it('reader: true opens readers over the partitions listed at open', async () => {
    const broker = new FakePulsarBroker().topic(T, 2);
    const { context } = recordingPartContext();
    const source = await pulsar({
      port: broker.port(),
      cluster: 'eu',
      topics: [T],
      reader: true,
    }).open(context);
    expect(source).toBeInstanceOf(PulsarReaderSource);
    expect(source.partitions()).toEqual([
      { topic: T, partition: 0 },
      { topic: T, partition: 1 },
    ]);
    await source.close();
  });

  it("refuses log and debug (the topology's), and bad options where they are declared", () => {
    const port = new FakePulsarBroker().port();
    const base = { port, cluster: 'eu', topics: [T], subscription: 's' };
    expect(() => pulsar({ ...base, log: () => undefined } as never)).toThrow(ConfigError);
    expect(() => pulsar({ ...base, debug: () => undefined } as never)).toThrow(
      /pulsarSource\.debug/,
    );
    expect(() => pulsar({ ...base, maxBatchMessages: 0 })).toThrow(
      /pulsarSource\.maxBatchMessages/,
    );
    expect(() =>
      pulsar({ port, cluster: 'eu', topics: [T], reader: true, subscription: 's' } as never),
    ).toThrow(/pulsarSource\.subscription/);
  });
});
