import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import { CoordinationError } from '../errors.js';

/** What a copy of an etcd prefix is told: the whole prefix once, then each change. */
export interface PrefixCopy {
  /** The whole prefix, oldest revision first: the copy starts again from exactly these. */
  loaded(kvs: readonly IKeyValue[]): void;
  /** A key of the prefix was put (also a put of this process, seen again). */
  put(kv: IKeyValue): void;
  /** A key of the prefix was deleted (its lease ended, or a process deleted it). */
  deleted(key: string): void;
}

/**
 * An etcd prefix loaded whole and then watched from the next revision, for
 * a copy kept in this process (the mirrored sets, ADR 0037). A failed load
 * is tried again by the next `ready`; a watch that fails to resume (a
 * revision compacted away) is dropped, and the next `ready` loads the whole
 * prefix again. `current` says whether the copy is kept current now.
 */
export class WatchedPrefix {
  private loading: Promise<void> | null = null;
  private watcher: Watcher | null = null;
  private connected = false;
  private closed = false;

  constructor(
    private readonly client: Etcd3,
    readonly prefix: string,
    private readonly copy: PrefixCopy,
  ) {}

  /** Loaded, and the watch connected. */
  get current(): boolean {
    return this.connected && this.watcher !== null;
  }

  /** The prefix loaded and watched; rejects with why not (TWG_COORDINATION_UNAVAILABLE, or CLOSED). */
  ready(): Promise<void> {
    if (this.closed) {
      return Promise.reject(new CoordinationError('TWG_COORDINATION_CLOSED', 'the set is closed'));
    }
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = null;
      throw error instanceof CoordinationError
        ? error
        : new CoordinationError(
            'TWG_COORDINATION_UNAVAILABLE',
            `etcd: loading ${this.prefix} failed`,
            error,
          );
    });
    return this.loading;
  }

  close(): void {
    this.closed = true;
    this.connected = false;
    void this.watcher?.cancel().catch(() => undefined);
    this.watcher = null;
  }

  private async load(): Promise<void> {
    const res = await this.client.getAll().prefix(this.prefix).exec();
    const kvs = [...res.kvs].sort((a, b) =>
      compare(BigInt(a.mod_revision), BigInt(b.mod_revision)),
    );
    const watcher = await this.client
      .watch()
      .prefix(this.prefix)
      .startRevision(String(BigInt(res.header.revision) + 1n))
      .create();
    if (this.closed) {
      await watcher.cancel();
      throw new CoordinationError('TWG_COORDINATION_CLOSED', 'the set is closed');
    }
    this.copy.loaded(kvs);
    this.watcher = watcher;
    this.connected = true;
    watcher.on('put', (kv) => {
      this.copy.put(kv);
    });
    watcher.on('delete', (kv) => {
      this.copy.deleted(kv.key.toString('utf8'));
    });
    watcher.on('disconnected', () => (this.connected = false));
    watcher.on('connected', () => (this.connected = true));
    // A revision compacted away (or any failure to resume): load the whole copy again.
    watcher.on('error', () => {
      this.connected = false;
      void watcher.cancel().catch(() => undefined);
      if (this.watcher === watcher) this.watcher = null;
      this.loading = null;
    });
  }
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
