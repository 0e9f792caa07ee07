import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import type { ZerobusTransport } from '../../src/transport.js';
import type { ZerobusPeer } from '../peer/zerobus-peer.js';
import { ipcOf, SPEC } from '../contract/transport-contract.js';
import { settled } from '../helpers.js';
import { sdkFactory, startPeer } from './peer-fixture.js';

// SdkTransport over the REAL native binding: its hazards and failure paths.
let peer: ZerobusPeer;
beforeEach(async () => {
  peer = await startPeer({ ackDelayMs: 2 });
});
afterEach(async () => {
  await peer.stop();
});

async function roundTrip(t: ZerobusTransport): Promise<void> {
  await t.waitForOffset(await t.submit(ipcOf(1)));
}

/** Submits until one is refused (the SDK notices a failure asynchronously); bounded. */
async function firstRefusal(t: ZerobusTransport): Promise<unknown> {
  for (let i = 0; i < 400; i++) {
    try {
      await t.submit(ipcOf(1));
    } catch (error) {
      return error;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('no submit was refused');
}

describe('SdkTransport hazards', () => {
  it(
    'a wait holds its stream’s lock; another stream of the pool keeps going',
    { timeout: 20_000 },
    async () => {
      const factory = sdkFactory(peer);
      const a = await factory.open(SPEC);
      const heldConnection = peer.connections.at(-1);
      const b = await factory.open(SPEC);
      heldConnection?.holdAcks();

      await a.submit(ipcOf(1));
      const waitA = a.waitForOffset(0);
      await roundTrip(b);
      // The binding's wait on A holds A's lock, so this submit cannot even be queued…
      const stalled = a.submit(ipcOf(1));
      for (let i = 0; i < 5; i++) await roundTrip(b);
      expect(await settled(stalled)).toBe(false);
      expect(await settled(waitA)).toBe(false);
      // …while B completed six full submit-and-acknowledge round trips.
      expect(
        peer.batches.filter((x) => x.connection !== heldConnection?.id && x.acknowledged),
      ).toHaveLength(6);

      heldConnection?.release();
      await waitA;
      expect(await stalled).toBe(1);
      await Promise.all([a.close(), b.close()]);
    },
  );

  it(
    'refuses a batch whose schema is not the stream’s as poison-batch, and the stream goes on',
    { timeout: 20_000 },
    async () => {
      const t = await sdkFactory(peer).open(SPEC);
      const strings = tableToIPC(tableFromArrays({ n: ['a', 'b'] }), 'stream');
      await expect(t.submit(strings)).rejects.toMatchObject({ failure: 'poison-batch' });
      await expect(t.submit(ipcOf(0))).rejects.toMatchObject({ failure: 'poison-batch' });
      expect(await t.submit(ipcOf(3))).toBe(0);
      await t.flush();
      await t.close();
    },
  );
});

describe('SdkTransport failures', () => {
  it(
    'reports the root cause of a dead stream, not "closing or closed"',
    { timeout: 20_000 },
    async () => {
      const t = await sdkFactory(peer).open(SPEC);
      peer.failAfter(2, status.INVALID_ARGUMENT, 'injected: bad data');
      await t.submit(ipcOf(1));
      const last = await t.submit(ipcOf(1));
      const failure = await t.waitForOffset(last).catch((e: unknown) => e);
      expect(failure).toMatchObject({ failure: 'poison-stream' });
      expect(String(failure)).toMatch(/injected: bad data/);
      // Every later call reports the same root cause; close does not repeat it.
      await expect(t.submit(ipcOf(1))).rejects.toBe(failure);
      await expect(t.flush()).rejects.toBe(failure);
      await t.close();
    },
  );

  it(
    'finds the root cause when a submit meets the dead stream before any wait did',
    { timeout: 20_000 },
    async () => {
      const t = await sdkFactory(peer).open(SPEC);
      peer.failAfter(1, status.INVALID_ARGUMENT, 'injected: refused');
      const refusal = await firstRefusal(t);
      expect(refusal).toMatchObject({ failure: 'poison-stream' });
      expect(String(refusal)).toMatch(/injected: refused/);
      expect(String(refusal)).not.toMatch(/closing or closed/);
      await t.close();
    },
  );

  it(
    'turns a retryable failure the SDK stopped recovering from into poison-stream',
    { timeout: 20_000 },
    async () => {
      const t = await sdkFactory(peer).open(SPEC);
      peer.failAfter(1, status.UNAVAILABLE, 'injected: down');
      peer.failAfter(0, status.UNAVAILABLE, 'injected: still down', 100);
      const offset = await t.submit(ipcOf(1));
      await expect(t.waitForOffset(offset)).rejects.toMatchObject({ failure: 'poison-stream' });
      await expect(t.submit(ipcOf(1))).rejects.toThrow(/stopped recovering/);
      await t.close();
    },
  );

  it('classifies refused credentials as fatal-config at create', { timeout: 20_000 }, async () => {
    await expect(sdkFactory(peer, { clientSecret: 'wrong' }).open(SPEC)).rejects.toMatchObject({
      failure: 'fatal-config',
    });
    peer.failAfter(0, status.UNAUTHENTICATED, 'injected: token rejected', 10);
    await expect(sdkFactory(peer).open(SPEC)).rejects.toMatchObject({ failure: 'fatal-config' });
    // The SDK retries an auth rejection at setup once (a stale token), then gives up.
    expect(peer.connections).toHaveLength(2);
  });

  it(
    'classifies an unreachable workspace as transient at create',
    { timeout: 20_000 },
    async () => {
      const factory = sdkFactory(peer, { stream: { recoveryRetries: 0 } });
      await peer.stop();
      await expect(factory.open(SPEC)).rejects.toMatchObject({ failure: 'transient' });
      peer = await startPeer();
    },
  );

  it('refuses an unsupported field type naming the field, before connecting', async () => {
    const spec = { table: SPEC.table, fields: [{ name: 'u', type: 'uint8', nullable: false }] };
    // Fields can come from untyped configuration.
    const open = sdkFactory(peer).open(spec as unknown as typeof SPEC);
    await expect(open).rejects.toMatchObject({ failure: 'fatal-config' });
    await expect(open).rejects.toThrow(/fields\[0\] "u": type "uint8" is not supported/);
    expect(peer.connections).toHaveLength(0);
  });
});

describe('SdkTransportFactory', () => {
  it(
    'takes "127" as the workspace id from a loopback endpoint and authenticates with it',
    { timeout: 20_000 },
    async () => {
      const t = await sdkFactory(peer).open(SPEC);
      expect(peer.tokens.requests[0]).toMatchObject({ clientId: 'thalweg-test', granted: true });
      expect(peer.tokens.requests[0]?.resource).toContain('/workspaces/127/');
      await t.close();
    },
  );

  it(
    'shares an SDK instance among streamsPerSdk streams and releases on close',
    { timeout: 20_000 },
    async () => {
      const factory = sdkFactory(peer, { streamsPerSdk: 2 });
      const streams = await Promise.all([1, 2, 3].map(() => factory.open(SPEC)));
      expect(factory.sdkLoad).toEqual([2, 1]);
      await Promise.all(streams.map((s) => s.close()));
      expect(factory.sdkLoad).toEqual([0, 0]);
    },
  );
});
