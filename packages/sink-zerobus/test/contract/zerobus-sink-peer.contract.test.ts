import { status } from '@grpc/grpc-js';
import type { RecordBatch } from 'apache-arrow';
import { RECORD_ID_COLUMN, sinkId, type ConfirmTarget } from '@thalweg/connector-core';
import {
  describeSinkContract,
  type HeldRecord,
  type SinkFault,
  type SinkSubject,
} from '@thalweg/contracts';
import { ZerobusSink } from '../../src/index.js';
import { sdkFactory, startPeer } from '../databricks/peer-fixture.js';
import type { ZerobusPeer } from '../peer/zerobus-peer.js';
import { quiet } from '../helpers.js';
import { CONTRACT_FIELDS, CONTRACT_SCHEMA, contractBatch } from './contract-batches.js';

// ZerobusSink over the REAL native binding, against the in-process peer:
// what the peer acknowledged is what the store durably holds.
const TABLE = 'main.thalweg.contract';
const ID = sinkId('zerobus-peer-contract');

/** The peer's answer to the next data message: UNAVAILABLE is retried by the SDK, INVALID_ARGUMENT poisons the stream. */
function arm(peer: ZerobusPeer, fault: SinkFault): void {
  if (fault === 'transient') peer.failAfter(1, status.UNAVAILABLE, 'injected: leader moved');
  else if (fault === 'poison')
    peer.failAfter(1, status.INVALID_ARGUMENT, 'injected: record rejected');
  else throw new Error(`no ${fault} fault over the peer`);
}

function peerSubject(
  target: ConfirmTarget<'secondary'>,
  peer: ZerobusPeer,
  owner: boolean,
): SinkSubject<'secondary', RecordBatch> {
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams: 1, retry: { baseDelayMs: 5 }, rebuild: { baseDelayMs: 5 } },
    fields: CONTRACT_FIELDS,
    factory: sdkFactory(peer),
    confirm: target,
    log: quiet,
  });
  return {
    sink,
    batch: (records) => contractBatch(records),
    held: async () => {
      const ids = peer.values(TABLE, RECORD_ID_COLUMN, true);
      const labels = peer.values(TABLE, 'label', true);
      return ids.map((id, i): HeldRecord => ({ idHex: String(id), value: String(labels[i]) }));
    },
    inject: (fault) => arm(peer, fault),
    malformed: () => contractBatch([]),
    reopen: async (next) => peerSubject(next, peer, false),
    ...(owner ? { dispose: () => peer.stop() } : {}),
  };
}

describeSinkContract('ZerobusSink over the native binding and the local peer (one stream)', {
  lane: 'secondary',
  replay: 'copies-identical',
  faults: ['transient', 'poison'],
  refusesMalformed: true,
  restarts: true,
  open: async (target) => {
    const peer = await startPeer({ ackDelayMs: 1 });
    peer.expectSchema(TABLE, CONTRACT_SCHEMA);
    return peerSubject(target, peer, true);
  },
});
