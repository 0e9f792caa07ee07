import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { RecordBatch } from 'apache-arrow';
import { sinkId, type ConfirmTarget } from '@thalweg/connector-core';
import { describeSinkContract, type SinkFault, type SinkSubject } from '@thalweg/contracts';
import {
  FakeTransportFactory,
  readFakeServerBatches,
  ZerobusSink,
  ZerobusSinkError,
  type StreamSpec,
  type TransportFactory,
  type ZerobusTransport,
} from '../../src/index.js';
import { quiet } from '../helpers.js';
import { CONTRACT_FIELDS, contractBatch, heldRows } from './contract-batches.js';

const TABLE = 'main.thalweg.contract';
const ID = sinkId('zerobus-contract');

/**
 * The fake transport behind a switch: an armed fault fails the next
 * `waitForOffset` (the durability wait) of the stream. `transient` once;
 * `poison` kills the stream as a terminal server error does, so the sink
 * must rebuild it; `fatal` fails every call from then on.
 */
class FaultSwitch implements TransportFactory {
  armed: SinkFault | null = null;
  private fatal = false;

  constructor(readonly inner: FakeTransportFactory) {}

  async open(spec: StreamSpec): Promise<ZerobusTransport> {
    if (this.fatal) throw new ZerobusSinkError('fatal-config', 'injected: table is gone');
    const stream = await this.inner.open(spec);
    return {
      submit: (ipc) => {
        if (this.fatal) throw new ZerobusSinkError('fatal-config', 'injected: table is gone');
        return stream.submit(ipc);
      },
      waitForOffset: async (offset) => {
        const fault = this.armed;
        this.armed = null;
        if (fault === 'fatal') this.fatal = true;
        if (this.fatal) throw new ZerobusSinkError('fatal-config', 'injected: table is gone');
        if (fault === 'transient') throw new ZerobusSinkError('transient', 'injected: busy');
        if (fault === 'poison') {
          await stream.close();
          throw new ZerobusSinkError('poison-stream', 'injected: stream poisoned');
        }
        return stream.waitForOffset(offset);
      },
      flush: () => stream.flush(),
      close: () => stream.close(),
    };
  }
}

function zerobusSubject(
  target: ConfirmTarget<'secondary'>,
  dir: string,
): SinkSubject<'secondary', RecordBatch> {
  const transports = new FaultSwitch(
    new FakeTransportFactory({ ackLatencyMs: 1, server: { persistDir: dir } }),
  );
  const sink = new ZerobusSink<'secondary'>({
    id: ID,
    config: { table: TABLE, streams: 1, retry: { baseDelayMs: 1 }, rebuild: { baseDelayMs: 1 } },
    fields: CONTRACT_FIELDS,
    factory: transports,
    confirm: target,
    log: quiet,
  });
  return {
    sink,
    batch: (records) => contractBatch(records),
    // What the server fsync'd to its log before acknowledging, read back from the files.
    held: async () => heldRows(await readFakeServerBatches(dir)),
    inject: (fault) => (transports.armed = fault),
    malformed: () => contractBatch([]),
    reopen: async (next) => zerobusSubject(next, dir),
    dispose: async () => {
      await transports.inner.server.close();
    },
  };
}

const dirs: string[] = [];

describeSinkContract('ZerobusSink over the fake transport (durable fake server, one stream)', {
  lane: 'secondary',
  replay: 'copies-identical',
  faults: ['transient', 'poison', 'fatal'],
  refusesMalformed: true,
  restarts: true,
  open: async (target) => {
    const dir = await mkdtemp(join(tmpdir(), 'twg-zerobus-contract-'));
    dirs.push(dir);
    return zerobusSubject(target, dir);
  },
});

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
