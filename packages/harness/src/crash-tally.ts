import type { ChildExit, ChildRun } from './child-process.js';
import { KILL_CAUSES, type KillCause, type KillPlan } from './kill-plan.js';

/** How a cycle's child ended, and the words for the log. */
export interface CycleEnd {
  readonly kind: 'killed' | 'caught-up' | 'failed';
  readonly line: string;
}

/** What each ended cycle counts toward: kills by cause, children that failed, idle recoveries. */
export class CrashTally {
  kills = 0;
  childFailures = 0;
  recoveryIdle = 0;
  failuresInARow = 0;
  readonly killPoints = Object.fromEntries(KILL_CAUSES.map((c) => [c, 0])) as Record<
    KillCause,
    number
  >;

  /**
   * Counts how a cycle's child ended, and returns the line that says so. A
   * SIGKILL the child fired itself (its crash point) or the parent sent is a
   * kill; a recovery child that exits cleanly caught up before its crash
   * point; anything else is a child that failed on its own.
   */
  count(child: ChildRun, exit: ChildExit, cause: KillCause | null, plan: KillPlan): CycleEnd {
    if (exit.signal === 'SIGKILL' && (child.fired || cause !== null)) {
      const why: KillCause =
        child.fired && plan.crashAt !== null ? plan.crashAt.point : (cause ?? 'deadline');
      this.kills += 1;
      this.killPoints[why] += 1;
      this.failuresInARow = 0;
      return { kind: 'killed', line: `killed (${why})` };
    }
    if (exit.code === 0 && plan.mode === 'recovery-window') {
      this.recoveryIdle += 1;
      return { kind: 'caught-up', line: 'caught up before its crash point' };
    }
    this.childFailures += 1;
    this.failuresInARow += 1;
    return {
      kind: 'failed',
      line: `exited on its own (code ${exit.code}, signal ${exit.signal})`,
    };
  }
}

/** A child's last progress line, for the cycle's log line. */
export function describeProgress(child: ChildRun): string {
  const last = child.last;
  return last === null
    ? 'no progress line'
    : `read ${last.read}, durable ${last.durable}, committed ${last.committed}, ` +
        `pg +${last.pg.inserted} (dup ${last.pg.duplicates}), shed ${last.shed}, replayed ${last.replayed}, ` +
        `zerobus poisons ${last.zerobus.poisons} (rebuilds ${last.zerobus.rebuilds})`;
}
