import { describe, expect, it } from 'vitest';
import { childArgv, parseChildArgs, type ChildArgs } from '../src/child-args.js';
import {
  MIN_RECORDS,
  parseCrashArgs,
  PULSAR_MIN_RECORDS,
  PULSAR_RECORDS_PER_KILL,
  RECORDS_PER_KILL,
} from '../src/crash-args.js';
import { killDeck, planCycle } from '../src/kill-plan.js';
import { CRASH_POINTS } from '../src/crash-point.js';
import { SeededRandom } from '../src/seeded-random.js';

describe('harness:crash arguments', () => {
  it('defaults records to the kills, with a floor', () => {
    expect(parseCrashArgs([], 7)).toMatchObject({
      kills: 20,
      records: 8_000,
      seed: 7,
      partitions: 4,
    });
    expect(parseCrashArgs(['--kills', '3'], 7).records).toBe(MIN_RECORDS);
    expect(parseCrashArgs(['--kills', '200'], 7).records).toBe(200 * RECORDS_PER_KILL);
    expect(parseCrashArgs(['--kills', '2', '--records', '10', '--keep'], 7)).toMatchObject({
      records: 10,
      keep: true,
    });
  });

  it('reads from Kafka unless told --source pulsar', () => {
    expect(parseCrashArgs([], 7).source).toBe('kafka');
    expect(parseCrashArgs(['--source', 'pulsar'], 7).source).toBe('pulsar');
    // pnpm forwards the `--` of `pnpm harness:crash -- --source pulsar`.
    expect(parseCrashArgs(['--', '--source', 'pulsar', '--kills', '3'], 7)).toMatchObject({
      source: 'pulsar',
      kills: 3,
      records: PULSAR_MIN_RECORDS,
    });
    expect(parseCrashArgs(['--source', 'pulsar', '--kills', '50'], 7).records).toBe(
      50 * PULSAR_RECORDS_PER_KILL,
    );
    expect(() => parseCrashArgs(['--source', 'rabbit'], 7)).toThrow(
      /--source must be kafka or pulsar, got rabbit/,
    );
  });

  it('refuses bad flags naming them', () => {
    expect(() => parseCrashArgs(['--kill', '3'], 0)).toThrow(/unknown flag --kill/);
    expect(() => parseCrashArgs(['--kills', '0'], 0)).toThrow(/--kills must be an integer/);
    expect(() => parseCrashArgs(['--kills'], 0)).toThrow(/--kills needs a value/);
    expect(() => parseCrashArgs(['--seed', '1', '--seed', '2'], 0)).toThrow(/--seed given twice/);
  });

  it('hands a child its arguments unchanged', () => {
    const args: ChildArgs = {
      role: 'recovery',
      dir: '/tmp/x',
      source: 'pulsar',
      pulsarType: 'Failover',
      topic: 't',
      group: 'g',
      partitions: 3,
      sinkSchema: 's',
      coverageSchema: 's_cov',
      batchRecords: 77,
      laneBatches: 2,
      windowRecords: 200,
      zerobusPoisonWaits: [3, 1],
    };
    expect(parseChildArgs(childArgv(args))).toEqual(args);
    const unpoisoned = { ...args, zerobusPoisonWaits: [] };
    expect(childArgv(unpoisoned)).not.toContain('--zerobus-poison-waits');
    expect(parseChildArgs(childArgv(unpoisoned))).toEqual(unpoisoned);
    expect(() =>
      parseChildArgs([...childArgv(unpoisoned), '--zerobus-poison-waits', '2,x']),
    ).toThrow(
      /--zerobus-poison-waits must be a comma-separated list of integers in \[1, 1000000\], got "2,x"/,
    );
    expect(() => parseChildArgs(childArgv({ ...args, role: 'ingest' as 'both' }))).toThrow(
      /--role must be both or recovery/,
    );
  });
});

describe('the kill plan', () => {
  it('reaches every crash point within one deck, reproducibly from the seed', () => {
    const deck = killDeck(new SeededRandom(42), CRASH_POINTS.length + 2);
    for (const point of CRASH_POINTS) expect(deck).toContain(point);
    expect(deck.filter((m) => m === 'timed')).toHaveLength(2);
    expect(killDeck(new SeededRandom(42), 30)).toEqual(killDeck(new SeededRandom(42), 30));
  });

  it('drops Postgres connections every third cycle', () => {
    const rand = new SeededRandom(1);
    const drops = [0, 1, 2, 3, 4, 5].map((c) => planCycle(rand, 'timed', c).pgDropsAfterMs.length);
    expect(drops).toEqual([0, 0, 3, 0, 0, 3]);
  });

  it('plans a crash point for every mode but timed', () => {
    const rand = new SeededRandom(3);
    for (const point of CRASH_POINTS) {
      const plan = planCycle(rand, point, 0);
      expect(plan.crashAt?.point).toBe(point);
      expect(plan.crashAt?.n).toBeGreaterThanOrEqual(1);
      expect(plan.timed).toBeNull();
    }
    const timed = planCycle(rand, 'timed', 0);
    expect(timed.crashAt).toBeNull();
    expect(timed.timed).not.toBeNull();
  });
});
