import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { EtcdCluster } from './etcd-env.js';

const run = promisify(execFile);
/** This file sits three levels below the repository root, as source and as built. */
const SCRIPT = fileURLToPath(new URL('../../../scripts/services/etcd.sh', import.meta.url));

/** A three-member etcd cluster of one test file's own, whose members it may kill. */
export interface PrivateEtcd extends EtcdCluster {
  /** Stops member `n` (1..3) at once, as a crash would. */
  kill(n: 1 | 2 | 3): Promise<void>;
  /** Starts member `n` again on its data. */
  start(n: 1 | 2 | 3): Promise<void>;
  /** Stops every member and removes the cluster's data. */
  down(): Promise<void>;
}

/**
 * Starts a cluster with the repo's own `etcd.sh` on `portBase` (its members
 * on portBase, +10, +20, peers one above each) and a data directory of its
 * own. Fault tests kill members of THIS cluster, never of the shared one the
 * other test files use at the same time: vitest runs files in parallel, and
 * a member killed under another file's test would fail it. Each test file
 * picks a port base no other file uses, below 32768: Linux hands out ports
 * from 32768 up to outgoing connections, and one of those may hold a port
 * a member started mid-run wants.
 */
export async function privateEtcd(portBase: number): Promise<PrivateEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-etcd-'));
  const env = {
    ...process.env,
    THALWEG_ETCD_PORT_BASE: String(portBase),
    THALWEG_SERVICES_DIR: dir,
  };
  const script = (...args: string[]) => run('bash', [SCRIPT, ...args], { env });
  const { stdout } = await script('up');
  const line = /THALWEG_ETCD_ENDPOINTS=(\S+)/.exec(stdout);
  if (line?.[1] === undefined) throw new Error(`etcd.sh up printed no endpoints: ${stdout}`);
  return {
    endpoints: line[1].split(','),
    kill: async (n) => {
      await script('kill-member', String(n));
    },
    start: async (n) => {
      await script('start-member', String(n));
    },
    down: async () => {
      await script('down').catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
