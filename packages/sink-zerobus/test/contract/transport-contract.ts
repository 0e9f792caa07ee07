import { describe, expect, it } from 'vitest';
import { tableToIPC, Table } from 'apache-arrow';
import { ZerobusSinkError } from '../../src/errors.js';
import type { StreamSpec, TransportFactory } from '../../src/transport.js';
import { batchOf } from '../helpers.js';
import { describeBatchContract } from './batch-contract.js';

export const SPEC: StreamSpec = {
  table: 'main.thalweg.events',
  fields: [{ name: 'n', type: 'int32', nullable: false }],
};

export function ipcOf(rows: number): Uint8Array {
  return tableToIPC(new Table(batchOf(rows)), 'stream');
}

/**
 * What any ZerobusTransport must do, run against the fake and (with its
 * local peer) the real binding: offsets 0, 1, 2, … per stream in call order
 * even when submits overlap, cumulative acknowledgement, waits only on
 * offsets already returned (refused at once, never hung), an idempotent
 * close after which the stream is dead; and the binding's refusals of a
 * batch (batch-contract.ts).
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

    it('hands out offsets in call order when submits overlap', async () => {
      const t = await (await factory()).open(SPEC);
      const offsets = await Promise.all(Array.from({ length: 40 }, () => t.submit(ipcOf(2))));
      expect(offsets).toEqual(Array.from({ length: 40 }, (_, i) => i));
      await t.flush();
      await t.close();
    });

    it('flushes what was submitted before the call, and nothing submitted is fine', async () => {
      const t = await (await factory()).open(SPEC);
      await t.flush();
      const pending = [t.submit(ipcOf(1)), t.submit(ipcOf(1)), t.submit(ipcOf(1))];
      await t.flush();
      expect(await Promise.all(pending)).toEqual([0, 1, 2]);
      await t.waitForOffset(2);
      await t.close();
    });

    it('refuses at once a wait on an offset submit has not returned', async () => {
      const t = await (await factory()).open(SPEC);
      await expect(t.waitForOffset(0)).rejects.toBeInstanceOf(ZerobusSinkError);
      expect(await t.submit(ipcOf(1))).toBe(0);
      await expect(t.waitForOffset(1)).rejects.toMatchObject({ failure: 'fatal-config' });
      // The refusal does not harm the stream.
      await t.waitForOffset(0);
      await t.close();
    });

    it('refuses at open, naming the field, a stream schema no stream can have', async () => {
      const f = await factory();
      const open = (fields: unknown[]) => f.open({ table: SPEC.table, fields } as StreamSpec);
      const refusals: [unknown[], RegExp][] = [
        [[], /a stream needs at least one field/],
        [[{ name: 'u', type: 'uint8', nullable: false }], /fields\[0\] "u": type "uint8"/],
        [
          [
            { name: 'a', type: 'utf8', nullable: true },
            { name: 'a', type: 'int32', nullable: true },
          ],
          /fields\[1\] "a": the name appears twice/,
        ],
        [[{ name: 'a', type: 'utf8' }], /"a": nullable must be true or false/],
      ];
      for (const [fields, says] of refusals) {
        const refused = open(fields);
        await expect(refused).rejects.toMatchObject({ failure: 'fatal-config' });
        await expect(refused).rejects.toThrow(says);
      }
    });

    it('closes idempotently; a closed stream refuses submits as poison-stream', async () => {
      const t = await (await factory()).open(SPEC);
      await t.submit(ipcOf(1));
      await t.flush();
      await Promise.all([t.close(), t.close()]);
      await t.close();
      await expect(t.submit(ipcOf(1))).rejects.toMatchObject({ failure: 'poison-stream' });
    });
  });
  describeBatchContract(name, factory);
}
