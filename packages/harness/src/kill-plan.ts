import { CRASH_POINTS, type CrashAt, type CrashPoint } from './crash-point.js';
import type { SeededRandom } from './seeded-random.js';

/** How a cycle's child is meant to die: at a crash point inside it, or by the parent's timer. */
export type KillMode = CrashPoint | 'timed';

/** Why a child actually died by SIGKILL: its crash point, the parent's timer, or a parent backstop. */
export type KillCause = KillMode | 'idle' | 'deadline';

export const KILL_CAUSES: readonly KillCause[] = [...CRASH_POINTS, 'timed', 'idle', 'deadline'];

export interface TimedKill {
  /** From the spawn (a kill during start-up), or from the first record read. */
  readonly anchor: 'spawn' | 'active';
  readonly delayMs: number;
}

export interface KillPlan {
  readonly mode: KillMode;
  readonly crashAt: CrashAt | null;
  readonly timed: TimedKill | null;
  /** When to drop the child's Postgres connections, in ms after its first record read (none: []). */
  readonly pgDropsAfterMs: readonly number[];
}

/**
 * The modes of the kill cycles, in a seeded order: every crash point comes
 * round once per deck, timed kills twice, so even a short run reaches all
 * of them.
 */
export function killDeck(rand: SeededRandom, cycles: number): KillMode[] {
  const deck: KillMode[] = [...CRASH_POINTS, 'timed', 'timed'];
  const out: KillMode[] = [];
  while (out.length < cycles) out.push(...rand.shuffle(deck));
  return out.slice(0, cycles);
}

/**
 * The plan of one cycle. Occurrence counts are small because a child lives
 * for seconds: the n-th raw submit, ack, checkpoint or replayed batch must
 * come round before the child catches up and goes idle.
 */
export function planCycle(rand: SeededRandom, mode: KillMode, cycle: number): KillPlan {
  // Every third cycle: drop the connections three times while the child works.
  const pgDrops =
    cycle % 3 === 2 ? [rand.int(0, 300), rand.int(100, 800), rand.int(300, 1_500)] : [];
  switch (mode) {
    case 'timed':
      return {
        mode,
        crashAt: null,
        timed: rand.chance(0.25)
          ? { anchor: 'spawn', delayMs: rand.int(200, 3_000) }
          : { anchor: 'active', delayMs: rand.int(0, 1_500) },
        pgDropsAfterMs: pgDrops,
      };
    case 'checkpoint':
      return {
        mode,
        crashAt: { point: mode, n: rand.int(1, 2), phase: rand.pick(['before', 'after'] as const) },
        timed: null,
        pgDropsAfterMs: pgDrops,
      };
    case 'coverage-write':
      // The recorder writes at most once per tick (200 ms): a burst takes one or two.
      return {
        mode,
        crashAt: { point: mode, n: rand.int(1, 2) },
        timed: null,
        pgDropsAfterMs: pgDrops,
      };
    case 'recovery-window':
      return {
        mode,
        crashAt: { point: mode, n: rand.int(1, 3) },
        timed: null,
        pgDropsAfterMs: pgDrops,
      };
    default:
      return {
        mode,
        crashAt: { point: mode, n: rand.int(1, 4) },
        timed: null,
        pgDropsAfterMs: pgDrops,
      };
  }
}
