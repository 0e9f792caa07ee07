import { describe, expect, it } from 'vitest';
import {
  describeSdkTransportOptions,
  isSecondaryClosure,
  nativeStreamOptions,
  offsetFromSdk,
  offsetToSdk,
  parseSdkTransportOptions,
} from '../../src/databricks/index.js';
import { withStatusName } from '../../src/databricks/sdk-failure.js';

const base = {
  zerobusEndpoint: 'https://1234567.zerobus.us-west-2.cloud.databricks.com',
  unityCatalogUrl: 'https://my-workspace.cloud.databricks.com',
  clientId: 'client',
  clientSecret: 'very-secret',
};

describe('SDK transport options', () => {
  it('fills every SDK stream option explicitly and logs them, never the secret', () => {
    const options = parseSdkTransportOptions(base);
    expect(options.stream).toMatchObject({ maxInflightBatches: 1000, flushTimeoutMs: 300_000 });
    const lines = describeSdkTransportOptions(options);
    expect(lines).toContain('stream.recoveryRetries=4');
    expect(lines).toContain('clientSecret=(redacted)');
    expect(lines.join('\n')).not.toContain('very-secret');
  });

  it('refuses bad values and unknown keys with the path', () => {
    expect(() =>
      parseSdkTransportOptions({ ...base, zerobusEndpoint: '1234.zerobus.example' }),
    ).toThrow(/zerobus\.sdk\.zerobusEndpoint: must start with https:\/\//);
    expect(() => parseSdkTransportOptions({ ...base, stream: { flushTimeoutMs: 0 } })).toThrow(
      /zerobus\.sdk\.stream\.flushTimeoutMs/,
    );
    expect(() => parseSdkTransportOptions({ ...base, waitPerBatch: true })).toThrow(/waitPerBatch/);
  });

  it('maps compression onto the binding’s enum', () => {
    const enumOf = { Lz4Frame: 0, Zstd: 1 };
    const stream = parseSdkTransportOptions({ ...base, stream: { ipcCompression: 'zstd' } }).stream;
    expect(nativeStreamOptions(stream, enumOf).ipcCompression).toBe(1);
    const none = parseSdkTransportOptions(base).stream;
    expect('ipcCompression' in nativeStreamOptions(none, enumOf)).toBe(false);
    expect(() => nativeStreamOptions(stream, {})).toThrow(/no IpcCompressionType.Zstd/);
  });
});

describe('SDK offsets', () => {
  it('converts bigints up to 2^53 - 1 and refuses anything beyond as poison-stream', () => {
    expect(offsetFromSdk(0n, 't')).toBe(0);
    expect(offsetFromSdk(2n ** 53n - 1n, 't')).toBe(Number.MAX_SAFE_INTEGER);
    for (const bad of [2n ** 53n, -1n, 1.5, null]) {
      expect(() => offsetFromSdk(bad, 'main.a.b')).toThrow(
        expect.objectContaining({ failure: 'poison-stream' }),
      );
    }
    expect(offsetToSdk(7)).toBe(7n);
  });
});

describe('SDK messages', () => {
  it('names the status a binding message encodes, so the shared classifier can match it', () => {
    expect(
      withStatusName("code: 'The request does not have valid authentication credentials'"),
    ).toMatch(/\[status: unauthenticated\]$/);
    expect(
      withStatusName('Specified UC token is in invalid format: Client error (403): x'),
    ).toMatch(/\[status: permission denied\]$/);
    expect(withStatusName('something else')).toBe('something else');
  });

  it('recognises the secondary "closing or closed" family', () => {
    expect(isSecondaryClosure(new Error('message: "Stream is closing or closed"'))).toBe(true);
    expect(isSecondaryClosure(new Error('Arrow stream has been closed'))).toBe(true);
    expect(isSecondaryClosure(new Error('Client specified an invalid argument'))).toBe(false);
  });
});
