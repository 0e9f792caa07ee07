import { describe, expect, it } from 'vitest';
import {
  FakeTransportFactory,
  FakeZerobusServer,
  FakeZerobusTransport,
} from '../src/fake-transport.js';
import { ZerobusSinkError } from '../src/errors.js';
import { REFUSALS } from './contract/batch-contract.js';
import { describeTransportContract, ipcOf, SPEC } from './contract/transport-contract.js';
import { settled } from './helpers.js';

describeTransportContract('fake', () => new FakeTransportFactory({ ackLatencyMs: 2 }));

describe('FakeZerobusTransport', () => {
  it('blocks submit at the in-flight cap until acknowledgements arrive', async () => {
    const t = new FakeZerobusTransport(SPEC, { ackLatencyMs: 'manual', maxInflight: 2 });
    await t.submit(ipcOf(1));
    await t.submit(ipcOf(1));
    const third = t.submit(ipcOf(1));
    expect(await settled(third)).toBe(false);
    t.acknowledgeUpTo(0);
    expect(await third).toBe(2);
    await t.close();
  });

  it('refuses a wait on an offset it has not returned (the SDK would hang)', async () => {
    const t = new FakeZerobusTransport(SPEC, { ackLatencyMs: 'manual' });
    await expect(t.waitForOffset(0)).rejects.toThrow(/before submit returned that offset/);
    await t.close();
  });

  it('injects each failure class at the chosen call; poison kills the stream for good', async () => {
    const t = new FakeZerobusTransport(SPEC, {
      ackLatencyMs: 'manual',
      faults: [
        { op: 'submit', nth: 2, failure: 'transient' },
        { op: 'submit', nth: 3, failure: 'poison-batch' },
        { op: 'wait', nth: 1, failure: 'poison-stream' },
      ],
    });
    expect(await t.submit(ipcOf(1))).toBe(0);
    await expect(t.submit(ipcOf(1))).rejects.toMatchObject({ failure: 'transient' });
    await expect(t.submit(ipcOf(1))).rejects.toMatchObject({ failure: 'poison-batch' });
    expect(await t.submit(ipcOf(1))).toBe(1);
    await expect(t.waitForOffset(1)).rejects.toBeInstanceOf(ZerobusSinkError);
    await expect(t.submit(ipcOf(1))).rejects.toMatchObject({ failure: 'poison-stream' });
    expect(t.isDead).toBe(true);
  });

  it('only counts acknowledged batches on a server told not to retain them', async () => {
    const keeping = new FakeZerobusServer();
    const kept = new FakeZerobusTransport(SPEC, {}, keeping);
    const server = new FakeZerobusServer({ retain: false });
    const counted = new FakeZerobusTransport(SPEC, {}, server);
    for (const t of [kept, counted]) {
      await t.waitForOffset(await t.submit(ipcOf(1)));
      await t.waitForOffset(await t.submit(ipcOf(2)));
    }
    expect([keeping.acknowledged, keeping.batches.length]).toEqual([2, 2]);
    expect([server.acknowledged, server.batches.length]).toEqual([2, 0]);
  });

  it('keeps acknowledged batches on the shared server and reports unacknowledged ones at death', async () => {
    const f = new FakeTransportFactory({
      ackLatencyMs: 'manual',
      faults: () => [{ op: 'wait', nth: 1, failure: 'poison-stream' }],
    });
    await f.open(SPEC);
    const t = f.opened[0]!;
    await t.submit(ipcOf(1));
    await t.submit(ipcOf(2));
    t.acknowledgeUpTo(0);
    await expect(t.waitForOffset(1)).rejects.toMatchObject({ failure: 'poison-stream' });
    expect(f.server.batches).toHaveLength(1);
    expect(f.server.unacknowledgedAtDeath).toHaveLength(1);
  });

  it('with waitBlocksSubmit, a submit issued during a wait stalls until the wait ends (the binding’s lock)', async () => {
    const t = new FakeZerobusTransport(SPEC, { ackLatencyMs: 'manual', waitBlocksSubmit: true });
    await t.submit(ipcOf(1));
    const wait = t.waitForOffset(0);
    const next = t.submit(ipcOf(1));
    expect(await settled(next)).toBe(false);
    t.acknowledgeUpTo(0);
    await wait;
    expect(await next).toBe(1);
    await t.close();
  });
});

describe('FakeZerobusTransport refusals name what is wrong', () => {
  const refusal = (what: string) => {
    const found = REFUSALS.find((r) => r.what.startsWith(what));
    if (found === undefined) throw new Error(`no refusal "${what}"`);
    return found;
  };
  const refused = async (what: string): Promise<string> => {
    const r = refusal(what);
    const t = new FakeZerobusTransport(r.spec, { ackLatencyMs: 0 });
    const error: unknown = await t.submit(r.payload()).then(
      () => null,
      (e: unknown) => e,
    );
    await t.close();
    return error instanceof Error ? error.message : String(error);
  };

  it.each([
    [
      'other names and types',
      /position 0 is field "id" in the batch, "totally_different" in the declared/,
    ],
    ['a field of another type', /field "n" has type Int64 in the batch, Int32 declared/],
    [
      'a timestamp without',
      /field "t" has type Timestamp<MICROSECOND> in the batch, Timestamp<MICROSECOND, UTC>/,
    ],
    ['a nullable field declared', /field "n" is nullable in the batch, NOT NULL declared/],
    ['field metadata', /field "n" carries metadata \(keys origin\)/],
    ['schema metadata', /the batch schema carries metadata \(keys origin\)/],
    ['a field the stream does not', /field "extra" \(position 1\) is not declared/],
    ['a declared field missing', /declared field "b" \(position 1\) is missing/],
    ['nulls in a NOT NULL', /field "n":.*non-nullable/],
    ['two record batches', /holds 2 record batches .*exactly one per submit/],
    ['an empty record batch', /the record batch is empty \(zero rows\)/],
  ])('%s', async (what, says) => {
    const message = await refused(what);
    expect(message).toMatch(says);
    expect(message).toContain('main.thalweg.contract: submit refused');
  });

  it('a refused batch uses no offset and no in-flight slot', async () => {
    const r = refusal('an empty record batch');
    const t = new FakeZerobusTransport(r.spec, { ackLatencyMs: 'manual', maxInflight: 1 });
    await expect(t.submit(r.payload())).rejects.toMatchObject({ failure: 'poison-batch' });
    expect(await t.submit(r.valid())).toBe(0);
    expect(t.pending).toBe(1);
    t.acknowledgeUpTo(0);
    await t.flush();
    await t.close();
  });
});
