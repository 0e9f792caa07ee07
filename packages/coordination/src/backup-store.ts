// The port only: no AWS SDK type here, so a consumer of the package's
// types compiles without the optional SDK installed (s3-backup-store.ts has it).

/**
 * Where mode 1 keeps its backup: one object, written only over the version
 * it last read (an ETag condition), so a second mode 1 node pointed at the
 * same key is found out rather than silently overwriting the first.
 */
export interface BackupStore {
  /** The stored backup and its version, or null if there is none. */
  read(): Promise<{ readonly body: string; readonly etag: string } | null>;
  /**
   * Writes `body` over version `etag` (null: only if there is none yet) and
   * answers the new version; null if another writer changed it first.
   */
  write(body: string, etag: string | null): Promise<string | null>;
  close(): Promise<void>;
}
