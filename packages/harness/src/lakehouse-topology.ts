// A topology whose raw is a lakehouse table: Zerobus (its fake transport,
// persisting what it acknowledges, standing in for the Delta commits) as
// primary raw, read back through the Iceberg REST catalog, a PostgreSQL
// secondary and coverage on S3. The integration test ingests with it in its
// own process and recovers with it in a child process (lakehouse-child.ts)
// that is given no path of the ingest process: only the catalog, S3 and
// PostgreSQL.
import type { SinkId } from '@thalweg/connector-core';
import { IcebergRaw, RestCatalog } from '@thalweg/iceberg';
import { s3FileStore } from '@thalweg/iceberg/s3';
import type { CoverageStore } from '@thalweg/offset-store';
import { S3Coverage } from '@thalweg/offset-store/s3';
import { openTopology, type PipelineConfigInput } from '@thalweg/pipeline';
import { postgres } from '@thalweg/sink-postgres';
import {
  FakeCatalog,
  FakeTransportFactory,
  PRIMARY_RAW_TABLE_PROPERTIES,
  ZEROBUS_RAW_FIELDS,
  zerobusRaw,
} from '@thalweg/sink-zerobus';
import { files } from '@thalweg/source-files';
import { s3Endpoint } from '@thalweg/test-services';
import type pg from 'pg';

export const LAKE_CLUSTER = 'lakehouse';
export const LAKE_TOPIC = 'orders';
export const LAKE_PG = 'pg-orders';

/** Everything a process needs to join the topology: no local path of another process. */
export interface LakehouseNames {
  readonly icebergUrl: string;
  /** The Iceberg namespace and table the raw rows show through (the Zerobus table's Iceberg view). */
  readonly namespace: string;
  readonly table: string;
  /** Where coverage lives on S3: bucket and key prefix. */
  readonly bucket: string;
  readonly prefix: string;
  /** The PostgreSQL schema of the secondary's table. */
  readonly pgSchema: string;
}

export interface LakehouseProcess {
  readonly names: LakehouseNames;
  readonly role: 'ingest' | 'recovery';
  /** The NDJSON files the source reads (in the recovery role, never read). */
  readonly sourceDir: string;
  /** The fake Zerobus server: in-memory for recovery (it writes no raw), durable in a dir for ingest. */
  readonly zerobus: FakeTransportFactory;
  /** The catalog describing the Zerobus table (its properties re-checked on every describe). */
  readonly catalog: FakeCatalog;
  readonly pool: pg.Pool;
  /** Declares the Postgres secondary (ingest may run without it: the secondary down). */
  readonly withSecondary: boolean;
  readonly config?: Omit<PipelineConfigInput, 'secondaries'>;
  readonly log: (line: string) => void;
}

/** The Zerobus table the fake catalog knows, as three-part name. */
export function zerobusTable(names: LakehouseNames): string {
  return `main.${names.namespace}.${names.table}`;
}

/** A catalog that has the table, created with properties that allow the raw role, then `changed`. */
export async function lakehouseCatalog(
  names: LakehouseNames,
  changed: Readonly<Record<string, string>> = {},
): Promise<FakeCatalog> {
  const catalog = new FakeCatalog();
  await catalog.ensureTable(zerobusTable(names), ZEROBUS_RAW_FIELDS, {
    ...PRIMARY_RAW_TABLE_PROPERTIES,
    ...changed,
  });
  return catalog;
}

function s3Config() {
  const s3 = s3Endpoint();
  return {
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  };
}

/** The Iceberg view of raw, over the REST catalog and S3. */
export function lakehouseReadBack(names: LakehouseNames): IcebergRaw {
  return new IcebergRaw({
    source: { catalog: new RestCatalog({ uri: names.icebergUrl }), files: s3FileStore(s3Config()) },
    namespace: names.namespace,
    table: names.table,
  });
}

/** The secondary's rows: the record's `n`, where it came from, once per record id. */
export function ordersTable(schema: string) {
  return {
    schema,
    name: 'orders',
    columns: [
      { name: 'n', type: 'bigint' as const, nullable: false },
      { name: 'src_offset', type: 'bigint' as const, nullable: false },
    ],
  };
}

export async function openLakehouse(p: LakehouseProcess) {
  const { names } = p;
  const coverage = (sinks: readonly SinkId[]): CoverageStore =>
    new S3Coverage({ s3: s3Config(), bucket: names.bucket, prefix: names.prefix, sinks });
  const secondaries = p.withSecondary
    ? {
        [LAKE_PG]: postgres({
          pool: p.pool,
          table: ordersTable(names.pgSchema),
          row: (record) => {
            const v = JSON.parse(Buffer.from(record.value).toString('utf8')) as { n: number };
            return [v.n, record.offset];
          },
        }),
      }
    : {};
  return openTopology({
    source: files({
      files: { kind: 'directory', directory: p.sourceDir, extension: '.ndjson' },
      format: 'ndjson',
      cluster: LAKE_CLUSTER,
      topic: LAKE_TOPIC,
    }),
    raw: zerobusRaw({
      table: zerobusTable(names),
      streams: 1,
      transport: p.zerobus,
      catalog: p.catalog,
      readBack: lakehouseReadBack(names),
      // every submit re-describes the table: a flipped property stops ingest at the next batch
      recheckAfterMs: 1,
      visibleWithinMs: 60_000,
    }),
    secondaries,
    coverage,
    log: p.log,
    config: {
      ...p.config,
      recovery: { windowRecords: 100, scanEveryMs: 200, ...p.config?.recovery, role: p.role },
    },
  });
}
