import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildRole } from './child-args.js';
import type { ChildRun } from './child-process.js';
import type { KillCause, KillPlan } from './kill-plan.js';

const POLL_MS = 50;
/** A kill cycle's child that neither died nor went idle by then is killed (cause `deadline`). */
const CYCLE_DEADLINE_MS = 30_000;
/** A working child whose progress has not moved for this long is killed (cause `idle`). */
const IDLE_MS = 3_000;
/** The same before the first record: long enough for a rejoin after a killed member. */
const START_IDLE_MS = 12_000;

export interface CycleWatch {
  readonly child: ChildRun;
  readonly plan: KillPlan;
  readonly role: ChildRole;
  /** True once the cycle's burst of records was produced: a child may go idle only after it. */
  readonly burstProduced: () => boolean;
  /** Drops the child's PostgreSQL connections (a planned fault). */
  readonly dropConnections: () => Promise<void>;
}

/**
 * Watches one kill cycle's child until it dies: at its own crash point, or
 * killed by the parent when its timed kill falls due, when the cycle's
 * deadline passes, or when its progress stops moving. The child's progress
 * lines decide when it became active (the anchor of an `active` timed kill
 * and of the planned connection drops). Returns why the parent killed it
 * (null if it did not) and how long it lived.
 */
export async function watchCycle(
  w: CycleWatch,
): Promise<{ readonly cause: KillCause | null; readonly ms: number }> {
  const { child, plan, role } = w;
  let cause: KillCause | null = null;
  const killAs = (why: KillCause): void => {
    if (child.kill()) cause = why;
  };
  const spawnAt = Date.now();
  let killAt = plan.timed?.anchor === 'spawn' ? spawnAt + plan.timed.delayMs : null;
  let activeAt: number | null = null;
  let drops: number[] = [];
  let lastSignature = '';
  let lastChange = spawnAt;
  while (child.alive) {
    await sleep(POLL_MS);
    const now = Date.now();
    const line = child.last;
    if (activeAt === null && line !== null && (role === 'recovery' || line.read > 0)) {
      activeAt = now;
      if (plan.timed?.anchor === 'active') killAt = now + plan.timed.delayMs;
      drops = plan.pgDropsAfterMs.map((ms) => now + ms).sort((a, b) => a - b);
    }
    const signature =
      line === null
        ? ''
        : `${line.read}/${line.durable}/${line.committed}/${line.pg.inserted}/${line.replayed}`;
    if (signature !== lastSignature) {
      lastSignature = signature;
      lastChange = now;
    }
    while (drops.length > 0 && (drops[0] ?? Infinity) <= now) {
      drops.shift();
      await w.dropConnections();
    }
    if (killAt !== null && now >= killAt) killAs('timed');
    else if (now - spawnAt > CYCLE_DEADLINE_MS) killAs('deadline');
    else if (
      w.burstProduced() &&
      now - lastChange > (activeAt === null ? START_IDLE_MS : IDLE_MS)
    ) {
      killAs('idle');
    }
  }
  return { cause, ms: Date.now() - spawnAt };
}
