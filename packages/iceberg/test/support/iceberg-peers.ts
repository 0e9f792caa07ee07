// The test side of the Iceberg integration tests and the bench: pyiceberg
// writes tables and reads them back (scripts/services/iceberg/*.py), and
// our reader is pointed at the same catalog and S3. It imports nothing of
// this package: the tests use its sources, the bench its build.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { iceberg, icebergScript, s3Endpoint } from '@thalweg/test-services';
import type { S3ClientConfig } from '@aws-sdk/client-s3';

const run = promisify(execFile);

/** What write_table.py prints. */
export interface Written {
  readonly table: string;
  readonly metadata_location: string;
  readonly snapshot_id: string;
  readonly data_files: readonly { path: string; records: number; codecs: string[] }[];
}

/** The raw-like schema the tests write: a source partition, an offset, a value. */
export const RAW_SCHEMA = [
  { name: 'partition', type: 'int', required: true },
  { name: 'offset', type: 'long', required: true },
  { name: 'value', type: 'string' },
];

/** Runs a peer script with the catalog and S3 of the environment; `input` goes to its stdin. */
export async function peer(args: readonly string[], input?: string): Promise<string> {
  const { python } = iceberg();
  s3Endpoint(); // the peers read THALWEG_S3_*: a missing one fails here, by name
  const child = run(python, args, { maxBuffer: 1 << 28 });
  child.child.stdin?.end(input ?? '');
  return (await child).stdout;
}

/** Appends rows (or a `generate` spec) to a table with pyiceberg: one new snapshot, one data file. */
export async function writeTable(spec: object): Promise<Written> {
  return JSON.parse(
    await peer([icebergScript('write_table.py'), '-'], JSON.stringify(spec)),
  ) as Written;
}

/** pyiceberg's rows of a table for a row filter, as JSON objects. */
export async function readTable(
  table: string,
  rowFilter: string,
  snapshotId?: string,
): Promise<unknown[]> {
  const args = [
    icebergScript('read_table.py'),
    table,
    '--row-filter',
    rowFilter,
    '--sort-by',
    'offset',
  ];
  if (snapshotId !== undefined) args.push('--snapshot-id', snapshotId);
  const out = (await peer(args)).trim();
  return out === '' ? [] : out.split('\n').map((line) => JSON.parse(line) as unknown);
}

/** Where our reader finds the test catalog and S3 (path-style, as moto serves it). */
export function testStores(): { catalogUri: string; s3: S3ClientConfig } {
  const s3 = s3Endpoint();
  return {
    catalogUri: iceberg().url,
    s3: {
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    },
  };
}
