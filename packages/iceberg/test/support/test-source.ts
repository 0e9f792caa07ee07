// Our reader over the test catalog and S3, from this package's sources (the
// bench builds its own from the package's build: see iceberg-peers.ts).
import { RestCatalog, type IcebergSource } from '../../src/index.js';
import { s3FileStore } from '../../src/s3/index.js';
import { testStores } from './iceberg-peers.js';

/** A catalog client and an S3 file store on the test services. */
export function icebergSource(): IcebergSource {
  const stores = testStores();
  return { catalog: new RestCatalog({ uri: stores.catalogUri }), files: s3FileStore(stores.s3) };
}
