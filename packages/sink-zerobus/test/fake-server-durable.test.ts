import { mkdtemp, readdir, rm, truncate, writeFile, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FakeServerLogError,
  FileServerLog,
  parseServerLog,
  readFakeServerBatches,
  type FakeServerLog,
  type LogFileHandle,
} from '../src/fake-server-log.js';
import {
  FakeTransportFactory,
  FakeZerobusServer,
  FakeZerobusTransport,
} from '../src/fake-transport.js';
import { describeTransportContract, ipcOf, SPEC } from './contract/transport-contract.js';
import { settled } from './helpers.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'twg-fake-zerobus-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A server log whose appends stay open until the test lets them finish. */
function heldLog(): FakeServerLog & { appended: Uint8Array[][]; release: () => void } {
  let release: () => void = () => undefined;
  const appended: Uint8Array[][] = [];
  return {
    appended,
    append: (payloads) =>
      new Promise<void>((resolve) => {
        appended.push([...payloads]);
        release = resolve;
      }),
    close: async () => undefined,
    release: () => {
      release();
    },
  };
}

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);

const contractDir = join(tmpdir(), `twg-fake-zerobus-contract-${process.pid}`);
// Each contract test opens its own factory; their servers hold a log file open until closed.
const contractFactories: FakeTransportFactory[] = [];
afterAll(async () => {
  await Promise.all(contractFactories.map((f) => f.server.close()));
  await rm(contractDir, { recursive: true, force: true });
});
describeTransportContract('fake, durable', () => {
  const factory = new FakeTransportFactory({
    ackLatencyMs: 2,
    server: { persistDir: contractDir },
  });
  contractFactories.push(factory);
  return factory;
});

describe('a durable FakeZerobusServer', () => {
  it('acknowledges a batch only after the server append finished', async () => {
    const log = heldLog();
    const server = new FakeZerobusServer({ log });
    const t = new FakeZerobusTransport(SPEC, { ackLatencyMs: 'manual' }, server);
    const payload = ipcOf(2);
    await t.submit(payload);
    const wait = t.waitForOffset(0);
    t.acknowledgeUpTo(0);
    expect(await settled(wait)).toBe(false);
    expect(log.appended).toEqual([[payload]]);
    expect(server.batches).toHaveLength(0);
    expect(t.pending).toBe(1);
    log.release();
    await wait;
    expect(server.batches).toEqual([payload]);
    expect(t.pending).toBe(0);
    await t.close();
  });

  it('acknowledges nothing a stream killed during the append would have', async () => {
    const log = heldLog();
    const server = new FakeZerobusServer({ log });
    const t = new FakeZerobusTransport(
      SPEC,
      { ackLatencyMs: 'manual', faults: [{ op: 'wait', nth: 2, failure: 'poison-stream' }] },
      server,
    );
    await t.submit(ipcOf(1));
    const first = t.waitForOffset(0);
    t.acknowledgeUpTo(0);
    await expect(t.waitForOffset(0)).rejects.toMatchObject({ failure: 'poison-stream' });
    log.release();
    await expect(first).rejects.toMatchObject({ failure: 'poison-stream' });
    expect(server.batches).toHaveLength(0);
    expect(server.unacknowledgedAtDeath).toHaveLength(1);
    await t.close();
  });

  it('kills the stream when the append fails: nothing is acknowledged', async () => {
    const server = new FakeZerobusServer({
      log: {
        append: () => Promise.reject(new Error('disk full')),
        close: async () => undefined,
      },
    });
    const t = new FakeZerobusTransport(SPEC, { ackLatencyMs: 0 }, server);
    await t.submit(ipcOf(1));
    await expect(t.waitForOffset(0)).rejects.toMatchObject({
      failure: 'poison-stream',
      message: expect.stringMatching(/could not persist batches up to offset 0/) as unknown,
    });
    expect(t.isDead).toBe(true);
    expect(server.batches).toHaveLength(0);
    await t.close();
  });

  it('writes, then fsyncs, then acknowledges', async () => {
    const calls: string[] = [];
    const handle: LogFileHandle = {
      write: async (b) => {
        calls.push(`write ${b.byteLength}`);
      },
      sync: async () => {
        calls.push('sync');
      },
      close: async () => {
        calls.push('close');
      },
    };
    const log = new FileServerLog(dir, async () => handle);
    const server = new FakeZerobusServer({ log });
    const t = new FakeZerobusTransport(SPEC, { ackLatencyMs: 'manual' }, server);
    const payload = ipcOf(3);
    await t.submit(payload);
    const wait = t.waitForOffset(0).then(() => calls.push('ack'));
    t.acknowledgeUpTo(0);
    await wait;
    // The first append carries the 8-byte magic, then an 8-byte header and the payload.
    expect(calls).toEqual([`write ${16 + payload.byteLength}`, 'sync', 'ack']);
    await t.close();
    await server.close();
    expect(calls.at(-1)).toBe('close');
  });

  it('reads back every acknowledged batch of every server instance, in order', async () => {
    const first = new FakeTransportFactory({ ackLatencyMs: 0, server: { persistDir: dir } });
    const a = await first.open(SPEC);
    // Batches of 1, 2, 3 and 4 rows: four different payloads.
    for (const rows of [1, 2, 3]) await a.waitForOffset(await a.submit(ipcOf(rows)));
    await a.close();
    await first.server.close();
    await new Promise((r) => setTimeout(r, 5));
    const second = new FakeTransportFactory({ ackLatencyMs: 0, server: { persistDir: dir } });
    const b = await second.open(SPEC);
    await b.waitForOffset(await b.submit(ipcOf(4)));
    await b.close();
    await second.server.close();
    expect(await readdir(dir)).toHaveLength(2);
    expect(await readFakeServerBatches(dir)).toEqual([ipcOf(1), ipcOf(2), ipcOf(3), ipcOf(4)]);
  });

  it('keeps the in-memory behaviour without persistDir: nothing on disk, batches in memory', async () => {
    const factory = new FakeTransportFactory({ ackLatencyMs: 'manual' });
    await factory.open(SPEC);
    const t = factory.opened[0];
    if (t === undefined) throw new Error('the factory opened no transport');
    const payload = ipcOf(7);
    await t.submit(payload);
    const wait = t.waitForOffset(0);
    t.acknowledgeUpTo(0);
    // Synchronous, as before: the batch is on the server as soon as it is acknowledged.
    expect(factory.server.batches).toEqual([payload]);
    await wait;
    expect(factory.server.isDurable).toBe(false);
    await t.close();
  });
});

describe('readFakeServerBatches', () => {
  async function oneLog(payloads: Uint8Array[]): Promise<string> {
    const log = new FileServerLog(dir);
    await log.append(payloads);
    await log.close();
    return log.file;
  }

  it('is empty for a directory that does not exist (nothing was acknowledged)', async () => {
    expect(await readFakeServerBatches(join(dir, 'never'))).toEqual([]);
  });

  it('ignores a torn last record: it was never acknowledged', async () => {
    const file = await oneLog([bytes(1, 2, 3, 4), bytes(5, 6, 7, 8)]);
    const size = (await stat(file)).size;
    for (const cut of [1, 4, 9]) {
      await truncate(file, size - cut);
      expect(await readFakeServerBatches(dir)).toEqual([bytes(1, 2, 3, 4)]);
    }
  });

  it('ignores a torn first append that left only part of the magic', async () => {
    const file = await oneLog([bytes(1)]);
    await truncate(file, 5);
    expect(await readFakeServerBatches(dir)).toEqual([]);
  });

  it('refuses a corrupt record, naming the file and its offset', async () => {
    const file = await oneLog([bytes(1, 2), bytes(3, 4), bytes(5, 6)]);
    const content = await readFile(file);
    // The second record starts after the magic (8) and the first record (8 + 2).
    content[18 + 8] = 99;
    await writeFile(file, content);
    await expect(readFakeServerBatches(dir)).rejects.toThrow(FakeServerLogError);
    await expect(readFakeServerBatches(dir)).rejects.toThrow(
      `${file} at byte 18: checksum mismatch in a record of 2 bytes`,
    );
  });

  it('refuses a file that is not a fake server log and a record of length 0', () => {
    expect(() => parseServerLog('x.log', bytes(1, 2, 3, 4, 5, 6, 7, 8, 9))).toThrow(
      'x.log at byte 0: not a fake server log (bad magic)',
    );
    const zero = Buffer.concat([Buffer.from('TWGFZB01'), Buffer.alloc(8)]);
    expect(() => parseServerLog('z.log', zero)).toThrow('z.log at byte 8: a record of length 0');
  });
});
