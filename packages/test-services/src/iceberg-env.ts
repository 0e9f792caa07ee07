import { fileURLToPath } from 'node:url';
import { MissingServiceError } from './service-env.js';

/**
 * Where the Iceberg integration tests reach the REST catalog that
 * `scripts/services/iceberg.sh up` started (Apache Iceberg's own
 * RESTCatalogServer, its warehouse in the test S3 of {@link s3Endpoint}).
 */
export interface IcebergService {
  /** Base URL of the REST catalog, e.g. `http://127.0.0.1:28181`: `${url}/v1/config` answers. */
  readonly url: string;
  /** Where the catalog puts new tables, e.g. `s3://thalweg-iceberg/warehouse`. */
  readonly warehouse: string;
  /**
   * A Python with pyiceberg and pyarrow, to spawn the test-side peers with:
   * see {@link icebergScript} (`write_table.py`, `read_table.py`). They read
   * the catalog and S3 from the THALWEG_ICEBERG_URL and THALWEG_S3_* variables.
   */
  readonly python: string;
}

function required(variable: string): string {
  const value = process.env[variable];
  if (value === undefined || value === '')
    throw new MissingServiceError(variable, 'Iceberg REST catalog');
  return value;
}

/** The Iceberg REST catalog, its warehouse, and the Python that runs its peers. */
export function iceberg(): IcebergService {
  return {
    url: required('THALWEG_ICEBERG_URL'),
    warehouse: required('THALWEG_ICEBERG_WAREHOUSE'),
    python: required('THALWEG_ICEBERG_PYTHON'),
  };
}

/** The Python scripts of `scripts/services/iceberg/` a test may run with {@link IcebergService.python}. */
export type IcebergScript = 'write_table.py' | 'read_table.py';

/**
 * Absolute path of one of the Iceberg peer scripts. This file sits three
 * levels below the repository root both as source (`src/`) and built
 * (`dist/`), so one relative path serves both.
 */
export function icebergScript(name: IcebergScript): string {
  return fileURLToPath(new URL(`../../../scripts/services/iceberg/${name}`, import.meta.url));
}
