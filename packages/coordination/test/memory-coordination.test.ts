import { describe, expect, it } from 'vitest';
import {
  BINARY_KEY_BYTES,
  coordination,
  inMemoryCoordination,
  ManualScheduler,
} from '../src/index.js';
import { describeBinarySetContract } from './support/binary-set-contract.js';
import {
  describeCoordinationContract,
  type CoordinationContractBackend,
} from './support/coordination-contract.js';
import { drivenFixture, FakeClock, MemoryBackupStore } from './support/memory-fixture.js';

const fake: CoordinationContractBackend = {
  ttlMs: 1000,
  async fresh() {
    const clock = new FakeClock();
    const scheduler = new ManualScheduler();
    return {
      coordination: inMemoryCoordination({ now: clock.now, scheduler }),
      ...drivenFixture(clock, scheduler),
    };
  },
};

const single: CoordinationContractBackend = {
  ttlMs: 1000,
  async fresh() {
    const clock = new FakeClock();
    const scheduler = new ManualScheduler();
    const c = await coordination({
      mode: 1,
      backup: { store: new MemoryBackupStore() },
      now: clock.now,
      scheduler,
    });
    return { coordination: c, ...drivenFixture(clock, scheduler) };
  },
};

describeCoordinationContract('in-memory fake', fake);
describeCoordinationContract('mode 1 (single node, backed up)', single);
describeBinarySetContract('in-memory fake', fake);
describeBinarySetContract('mode 1 (single node, backed up)', single);

describe('the in-memory binary set', () => {
  const keys = (...ids: number[]) => {
    const bytes = new Uint8Array(ids.length * BINARY_KEY_BYTES);
    ids.forEach((id, i) => (bytes[i * BINARY_KEY_BYTES] = id));
    return bytes;
  };
  const at = (...offsets: number[]) => ({
    partitions: new Uint32Array(offsets.length),
    offsets: Float64Array.from(offsets),
  });

  it('holds keys for their TTL on the injected clock, bounded by maxEntries', async () => {
    const clock = new FakeClock();
    const scheduler = new ManualScheduler();
    const c = inMemoryCoordination({ now: clock.now, scheduler });
    const set = c.binarySet?.('seen', { maxEntries: 2 });
    set?.addMany(keys(1, 2), 2, 1000, at(0, 1));
    expect([...(set?.getMany(keys(1, 2, 3), 3).found ?? [])]).toEqual([1, 1, 0]);
    set?.addMany(keys(3), 1, 5000, at(2));
    expect([...(set?.getMany(keys(1, 2, 3), 3).found ?? [])]).toEqual([0, 1, 1]);
    clock.ms += 1000;
    expect([...(set?.getMany(keys(2, 3), 2).found ?? [])]).toEqual([0, 1]);
    await scheduler.run();
    expect(set?.size()).toBe(1);
    await c.close();
  });

  it('refuses bad input and answers nothing once closed', async () => {
    const c = inMemoryCoordination({ scheduler: new ManualScheduler() });
    const set = c.binarySet?.('seen');
    expect(() => set?.getMany(keys(1), 2)).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_INVALID' }),
    );
    expect(() => set?.addMany(keys(1), 1, 0, at(0))).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_INVALID' }),
    );
    expect(() => set?.addMany(keys(1), 1, 1000, at(-1))).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_INVALID' }),
    );
    expect(() => set?.addMany(keys(1), 1, 1000, at(0.5))).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_INVALID' }),
    );
    expect(() => set?.claimMany(keys(1), 1, 1000, at(-1))).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_INVALID' }),
    );
    expect(set?.size()).toBe(0);
    expect([...(set?.claimMany(keys(1, 1), 2, 1000, at(4, 5)).offsets ?? [])]).toEqual([4, 4]);
    await c.close();
    expect(() => set?.claimMany(keys(2), 1, 1000, at(0))).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_CLOSED' }),
    );
    expect(() => set?.getMany(keys(1), 1)).toThrow(
      expect.objectContaining({ code: 'TWG_COORDINATION_CLOSED' }),
    );
  });
});
