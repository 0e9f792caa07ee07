import { describe, expect, it } from 'vitest';
import { tableToIPC, Table } from 'apache-arrow';
import type { StreamSpec, TransportFactory } from '../../src/transport.js';
import { batchOf } from '../helpers.js';

export const SPEC: StreamSpec = {
  table: 'main.thalweg.events',
  fields: [{ name: 'n', type: 'int32', nullable: false }],
};

export function ipcOf(rows: number): Uint8Array {
  return tableToIPC(new Table(batchOf(rows)), 'stream');
}

/**
 * What any ZerobusTransport must do, run against the fake and (with its
 * local peer) the real binding: offsets 0, 1, 2, … per stream, cumulative
 * acknowledgement, waits only on offsets already returned.
 */
export function describeTransportContract(
  name: string,
  factory: () => TransportFactory | Promise<TransportFactory>,
): void {
  describe(`ZerobusTransport contract: ${name}`, () => {
    it('numbers accepted batches 0, 1, 2, … and confirms them cumulatively', async () => {
      const t = await (await factory()).open(SPEC);
      const offsets = [];
      for (let i = 0; i < 5; i++) offsets.push(await t.submit(ipcOf(3)));
      expect(offsets).toEqual([0, 1, 2, 3, 4]);
      // One wait on the highest offset confirms every lower one.
      await t.waitForOffset(4);
      await t.waitForOffset(2);
      await t.flush();
      await t.close();
    });

    it('starts each new stream at offset 0', async () => {
      const f = await factory();
      const a = await f.open(SPEC);
      await a.submit(ipcOf(1));
      const b = await f.open(SPEC);
      expect(await b.submit(ipcOf(1))).toBe(0);
      await a.flush();
      await b.flush();
      await Promise.all([a.close(), b.close()]);
    });
  });
}
