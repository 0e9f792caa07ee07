import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { IcebergError } from './errors.js';

/**
 * Where the read path fetches a table's files (manifest lists, manifests,
 * data files) by the absolute location the metadata names. The one boundary
 * to object storage: the scan never sees an S3 client (that store is in
 * `@thalweg/iceberg/s3`, so the AWS SDK stays an optional peer).
 */
export interface FileStore {
  /** The whole file; fails with TWG_ICEBERG_FILE_UNREADABLE naming `location`. */
  read(location: string): Promise<Uint8Array>;
}

/** Local files, by `file:` URL or absolute path (tables a test or a tool wrote to disk). */
export function localFileStore(): FileStore {
  return {
    async read(location) {
      const path = location.startsWith('file:') ? fileURLToPath(location) : location;
      try {
        return await readFile(path);
      } catch (e) {
        throw new IcebergError('TWG_ICEBERG_FILE_UNREADABLE', location, String(e), { cause: e });
      }
    },
  };
}

/**
 * Routes each location by its scheme: `s3:`-family to `s3`, `file:` and
 * absolute paths to the local disk. A scheme with no store fails naming the
 * location rather than guessing.
 */
export function fileStoreByScheme(stores: { s3?: FileStore; local?: FileStore }): FileStore {
  const local = stores.local ?? localFileStore();
  return {
    async read(location) {
      if (/^s3[an]?:\/\//.test(location)) {
        if (stores.s3 === undefined) {
          throw new IcebergError(
            'TWG_ICEBERG_FILE_UNREADABLE',
            location,
            'an S3 location, and no S3 store was given',
          );
        }
        return await stores.s3.read(location);
      }
      if (location.startsWith('file:') || location.startsWith('/'))
        return await local.read(location);
      throw new IcebergError('TWG_ICEBERG_FILE_UNREADABLE', location, 'no store for this scheme');
    },
  };
}
