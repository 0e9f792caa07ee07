import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { iceberg, icebergScript, s3Endpoint, uniqueIdentifier } from '../src/index.js';

const run = promisify(execFile);

interface Written {
  readonly table: string;
  readonly metadata_location: string;
  readonly snapshot_id: string;
  readonly data_files: readonly { path: string; records: number; codecs: string[] }[];
}

const SCHEMA = [
  { name: 'id', type: 'long', required: true },
  { name: 'name', type: 'string' },
  { name: 'at', type: 'timestamptz' },
];
const ROWS = [
  { id: 1, name: 'one', at: '2024-01-02T03:04:05.000001+00:00' },
  { id: 2, name: null, at: '2024-01-02T03:04:06+00:00' },
  { id: 3, name: 'three', at: null },
];

/** Runs a peer script with the catalog and S3 of the environment; `input` goes to its stdin. */
async function peer(args: readonly string[], input?: string): Promise<string> {
  const { url, python } = iceberg();
  s3Endpoint(); // the peers read THALWEG_S3_*: a missing one fails here, by name
  const child = run(python, args, { env: { ...process.env, THALWEG_ICEBERG_URL: url } });
  child.child.stdin?.end(input ?? '');
  return (await child).stdout;
}

/** A 64-bit id from the raw JSON text: JSON.parse would round it to a double. */
function rawId(body: string, key: string): string | undefined {
  return new RegExp(`"${key}":(-?\\d+)`).exec(body)?.[1];
}

// Proves the service that scripts/services/iceberg.sh started is a working
// Iceberg REST catalog with its warehouse in the test S3: pyiceberg writes a
// table through it, the REST API serves that table's metadata, and pyiceberg
// reads the rows back, before any Iceberg code of ours is involved.
describe('Iceberg REST catalog service', () => {
  it('answers GET /v1/config with the endpoints it serves', async () => {
    const response = await fetch(`${iceberg().url}/v1/config`);
    expect(response.status).toBe(200);
    const config = (await response.json()) as { defaults: unknown; endpoints: string[] };
    expect(config.defaults).toEqual({});
    expect(config.endpoints).toContain('GET /v1/{prefix}/namespaces/{namespace}/tables/{table}');
    expect(config.endpoints).toContain('POST /v1/{prefix}/namespaces/{namespace}/tables/{table}');
  });

  it('holds a table pyiceberg wrote: its snapshot and schema over REST, its rows read back', async () => {
    const { url, warehouse } = iceberg();
    const namespace = 'thalweg_probe';
    const table = uniqueIdentifier('rows');
    const spec = { namespace, table, schema: SCHEMA, rows: ROWS };

    const written = JSON.parse(
      await peer([icebergScript('write_table.py'), '-'], JSON.stringify(spec)),
    ) as Written;
    expect(written.table).toBe(`${namespace}.${table}`);
    expect(
      written.metadata_location.startsWith(`${warehouse}/${namespace}/${table}/metadata/`),
    ).toBe(true);
    expect(written.snapshot_id).toMatch(/^-?\d+$/);
    expect(written.data_files.reduce((sum, f) => sum + f.records, 0)).toBe(3);
    for (const file of written.data_files) {
      expect(file.path).toMatch(
        new RegExp(`^${warehouse}/${namespace}/${table}/data/.*\\.parquet$`),
      );
      expect(file.codecs).toEqual(['ZSTD']);
    }

    const response = await fetch(`${url}/v1/namespaces/${namespace}/tables/${table}`);
    expect(response.status).toBe(200);
    const body = await response.text();
    const loaded = JSON.parse(body) as {
      'metadata-location': string;
      metadata: {
        'current-schema-id': number;
        schemas: { 'schema-id': number; fields: unknown[] }[];
        snapshots: { summary: Record<string, string> }[];
        properties: Record<string, string>;
      };
    };
    expect(loaded['metadata-location']).toBe(written.metadata_location);
    expect(rawId(body, 'current-snapshot-id')).toBe(written.snapshot_id);
    const { metadata } = loaded;
    const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id']);
    expect(schema?.fields).toEqual([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'name', required: false, type: 'string' },
      { id: 3, name: 'at', required: false, type: 'timestamptz' },
    ]);
    expect(metadata.snapshots).toHaveLength(1);
    expect(metadata.snapshots[0]?.summary).toMatchObject({
      operation: 'append',
      'added-records': '3',
      'total-records': '3',
    });
    expect(metadata.properties['write.parquet.compression-codec']).toBe('zstd');

    const lines = await peer([
      icebergScript('read_table.py'),
      `${namespace}.${table}`,
      '--sort-by',
      'id',
    ]);
    expect(
      lines
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(ROWS);
  }, 60_000);
});
