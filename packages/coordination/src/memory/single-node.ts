import type { Coordination } from '../coordination.js';
import { CoordinationError } from '../errors.js';
import type { BackupStore } from '../backup-store.js';
import { intervalScheduler, type Scheduler } from '../scheduler.js';
import { MemoryCoordination } from './memory-coordination.js';
import { MemoryState } from './memory-state.js';

export interface SingleNodeSettings {
  readonly store: BackupStore;
  readonly backupIntervalMs: number;
  readonly tickMs: number;
  readonly now?: (() => number) | undefined;
  readonly scheduler?: Scheduler | undefined;
}

/**
 * Mode 1: the whole state in this process, restored from the backup at
 * start, backed up every interval and once more on a graceful close. A crash
 * loses what changed since the last backup: at most one interval of leases
 * (which then wait out their TTL, as a dead holder's do), members (who
 * re-join on their next keep-alive) and expiring-set keys (missed dedup).
 * A failed periodic backup is retried on the next interval; the close backup
 * rejects, so the caller knows its last changes were not kept.
 */
export async function openSingleNode(settings: SingleNodeSettings): Promise<Coordination> {
  const now = settings.now ?? Date.now;
  const scheduler = settings.scheduler ?? intervalScheduler;
  const state = new MemoryState(now);
  const stored = await settings.store.read();
  let etag: string | null = null;
  if (stored !== null) {
    state.restore(stored.body, 'the coordination backup');
    etag = stored.etag;
  }
  let lastBackupAt: number | null = null;
  let running: Promise<void> = Promise.resolve();
  const backup = async (): Promise<void> => {
    const written = await settings.store.write(state.snapshot(), etag);
    if (written === null) {
      throw new CoordinationError(
        'TWG_COORDINATION_BACKUP_CONFLICT',
        'another process wrote the coordination backup since this node read it: two mode 1 nodes share one backup key',
      );
    }
    etag = written;
    lastBackupAt = now();
  };
  // One backup at a time, in order: a close waits for the periodic one in flight.
  const queued = (): Promise<void> => (running = running.catch(() => undefined).then(backup));
  let stopBackups = (): void => undefined;
  const core = new MemoryCoordination(
    state,
    { now, scheduler, tickMs: settings.tickMs },
    () => ({ kind: 'single-node', lastBackupAt }),
    async () => {
      stopBackups();
      try {
        await queued();
      } finally {
        await settings.store.close();
      }
    },
  );
  stopBackups = scheduler.every(settings.backupIntervalMs, () =>
    // A failed periodic backup is retried next interval; health shows its age.
    queued().catch(() => undefined),
  );
  return core;
}
