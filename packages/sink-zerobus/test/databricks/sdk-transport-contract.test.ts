import { afterAll, beforeAll } from 'vitest';
import type { ZerobusPeer } from '../peer/zerobus-peer.js';
import { describeTransportContract } from '../contract/transport-contract.js';
import { sdkFactory, startPeer } from './peer-fixture.js';

let peer: ZerobusPeer;
beforeAll(async () => {
  peer = await startPeer({ ackDelayMs: 2 });
});
afterAll(async () => {
  await peer.stop();
});

describeTransportContract('sdk binding over the local peer', () => sdkFactory(peer));
