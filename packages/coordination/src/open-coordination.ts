import type { BackupStore } from './backup-store.js';
import { s3BackupStore } from './s3-backup-store.js';
import type { Coordination } from './coordination.js';
import { openSingleNode } from './memory/single-node.js';
import { offCoordination } from './off.js';
import { parseCoordinationOptions, type CoordinationOptions } from './options.js';
import { intervalScheduler } from './scheduler.js';

/**
 * Opens coordination in the configured mode: 0 (off), 1 (this process, with
 * its backup restored first) or 3, 5, 7 (an etcd cluster, whose size is
 * checked against the mode before anything else). Options are parsed once
 * here; a refusal is a ConfigError naming the field (`coordination.mode`).
 * The etcd client and the AWS SDK are loaded only by the modes that use them.
 */
export async function coordination(options: CoordinationOptions): Promise<Coordination> {
  const o = parseCoordinationOptions(options);
  if (o.mode === 0) {
    return offCoordination(o.leases, o.scheduler ?? intervalScheduler, o.observeIntervalMs);
  }
  if (o.mode === 1) {
    const store: BackupStore =
      'store' in o.backup
        ? o.backup.store
        : await s3BackupStore(o.backup.s3, o.backup.bucket, o.backup.key);
    return openSingleNode({
      store,
      backupIntervalMs: o.backupIntervalMs,
      tickMs: o.tickMs,
      now: o.now,
      scheduler: o.scheduler,
    });
  }
  const { openEtcdCoordination } = await import('./etcd/etcd-coordination.js');
  return openEtcdCoordination(o);
}
