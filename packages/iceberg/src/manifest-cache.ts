import type { DataFile, ManifestFile } from './manifest.js';

/**
 * Decoded manifest lists and manifests, by location. Iceberg never rewrites
 * a metadata file in place (a commit writes new files and a new metadata
 * JSON), so a location names one content for good and a decoded file can be
 * kept: a recovery that reads several windows of one table fetches and
 * decodes each manifest once. Least recently used entries go past
 * `maxEntries`; a failed load is not kept, so the next call tries again.
 * Data files are never cached here: they are large and read once per window.
 */
export class ManifestCache {
  private readonly entries = new Map<string, Promise<unknown>>();

  constructor(readonly maxEntries = 1_000) {}

  /** The manifests of a manifest list, loaded by `load` on a miss. */
  manifestList(location: string, load: () => Promise<ManifestFile[]>): Promise<ManifestFile[]> {
    return this.get(`list:${location}`, load);
  }

  /**
   * A manifest's live data files. The key includes the sequence number its
   * entries inherit, which is fixed when the manifest is committed.
   */
  manifest(
    location: string,
    inherited: bigint,
    load: () => Promise<DataFile[]>,
  ): Promise<DataFile[]> {
    return this.get(`manifest:${inherited}:${location}`, load);
  }

  private get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key) as Promise<T> | undefined;
    if (hit !== undefined) {
      this.entries.delete(key); // re-inserted: the most recently used is last
      this.entries.set(key, hit);
      return hit;
    }
    const loading = load();
    this.entries.set(key, loading);
    loading.catch(() => {
      if (this.entries.get(key) === loading) this.entries.delete(key);
    });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
    return loading;
  }
}
