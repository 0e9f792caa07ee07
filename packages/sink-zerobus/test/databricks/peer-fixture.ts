import { SdkTransportFactory, type SdkTransportOptionsInput } from '../../src/databricks/index.js';
import { ZerobusPeer, type PeerOptions } from '../peer/zerobus-peer.js';

// The binding honours proxy variables; loopback must never go through one.
process.env['no_proxy'] = '127.0.0.1';
process.env['NO_PROXY'] = '127.0.0.1';

/**
 * SDK timeouts for tests: every wait of the binding ends within seconds, so
 * a hung binding or peer fails the test instead of hanging the suite.
 */
export const TEST_STREAM_OPTIONS = {
  connectionTimeoutMs: 5_000,
  recoveryTimeoutMs: 5_000,
  recoveryBackoffMs: 50,
  recoveryRetries: 3,
  flushTimeoutMs: 8_000,
  serverLackOfAckTimeoutMs: 8_000,
} as const;

export async function startPeer(options: PeerOptions = {}): Promise<ZerobusPeer> {
  return ZerobusPeer.start({ clientId: 'thalweg-test', clientSecret: 's3cret', ...options });
}

export function sdkFactory(
  peer: ZerobusPeer,
  overrides: Partial<SdkTransportOptionsInput> = {},
): SdkTransportFactory {
  return new SdkTransportFactory(
    {
      zerobusEndpoint: peer.endpoint,
      unityCatalogUrl: peer.unityCatalogUrl,
      clientId: 'thalweg-test',
      clientSecret: 's3cret',
      ...overrides,
      stream: { ...TEST_STREAM_OPTIONS, ...overrides.stream },
    },
    { log: () => undefined },
  );
}
