import { describe, expect, it } from 'vitest';
import { readManifest, readManifestList } from '../src/index.js';
import * as A from './support/avro-bytes.js';

// The shape of an Iceberg v2 manifest's schema (names as the Java and Python
// writers give them), cut to the fields the reader looks at plus one it skips.
const BOUNDS = {
  type: 'array',
  logicalType: 'map',
  items: {
    type: 'record',
    name: 'k126_v127',
    fields: [
      { name: 'key', type: 'int', 'field-id': 126 },
      { name: 'value', type: 'bytes', 'field-id': 127 },
    ],
  },
};
const MANIFEST = {
  type: 'record',
  name: 'manifest_entry',
  fields: [
    { name: 'status', type: 'int', 'field-id': 0 },
    { name: 'snapshot_id', type: ['null', 'long'], 'field-id': 1 },
    {
      name: 'data_file',
      'field-id': 2,
      type: {
        type: 'record',
        name: 'r2',
        fields: [
          { name: 'content', type: 'int', 'field-id': 134 },
          { name: 'file_path', type: 'string', 'field-id': 100 },
          { name: 'file_format', type: 'string', 'field-id': 101 },
          {
            name: 'partition',
            type: { type: 'record', name: 'r102', fields: [] },
            'field-id': 102,
          },
          { name: 'record_count', type: 'long', 'field-id': 103 },
          { name: 'file_size_in_bytes', type: 'long', 'field-id': 104 },
          { name: 'lower_bounds', type: ['null', BOUNDS], 'field-id': 125 },
          {
            name: 'upper_bounds',
            type: ['null', { ...BOUNDS, items: 'k126_v127' }],
            'field-id': 128,
          },
        ],
      },
    },
  ],
};

const le8 = (v: bigint): Uint8Array => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, v, true);
  return out;
};

function entry(o: {
  status: number;
  content?: number;
  path: string;
  format?: string;
  rows: number;
  lo?: bigint;
  hi?: bigint;
}): Uint8Array {
  const bound = (v: bigint | undefined): Uint8Array =>
    v === undefined ? A.union(0) : A.union(1, A.block([A.concat(A.int(2), A.bytes(le8(v)))]));
  return A.concat(
    A.int(o.status),
    A.union(1, A.long(2n ** 62n)),
    A.int(o.content ?? 0),
    A.str(o.path),
    A.str(o.format ?? 'PARQUET'),
    A.long(o.rows),
    A.long(1000),
    bound(o.lo),
    bound(o.hi),
  );
}

const manifest = (entries: Uint8Array[]): Uint8Array =>
  A.container({
    schema: MANIFEST,
    codec: 'deflate',
    blocks: [{ count: entries.length, data: A.concat(...entries) }],
  });

describe('manifests', () => {
  it('lists live data files with their bounds; DELETED entries are skipped', () => {
    const files = readManifest(
      manifest([
        entry({ status: 1, path: 's3://b/a.parquet', rows: 10, lo: 0n, hi: 9n }),
        entry({ status: 2, path: 's3://b/gone.parquet', rows: 5 }),
        entry({ status: 0, path: 's3://b/c.parquet', rows: 3 }),
      ]),
      'm.avro',
      5n,
    );
    expect(files.map((f) => f.path)).toEqual(['s3://b/a.parquet', 's3://b/c.parquet']);
    expect(files.map((f) => f.sequenceNumber)).toEqual([5n, 5n]); // inherited from the list
    expect(files[0]?.recordCount).toBe(10);
    expect(files[0]?.lowerBounds.get(2)).toEqual(le8(0n));
    expect(files[0]?.upperBounds.get(2)).toEqual(le8(9n));
    expect(files[1]?.lowerBounds.size).toBe(0);
  });

  it.each([
    [1, 'positional'],
    [2, 'equality'],
  ])('refuses a live delete file (content %i), naming it', (content, kind) => {
    const bytes = manifest([
      entry({ status: 1, path: 's3://b/a.parquet', rows: 1 }),
      entry({ status: 1, content, path: 's3://b/del.parquet', rows: 1 }),
    ]);
    expect(() => readManifest(bytes, 'm.avro')).toThrow(
      `TWG_ICEBERG_UNSUPPORTED: s3://b/del.parquet: a ${kind} delete file (in m.avro)`,
    );
  });

  it('a removed delete file is no reason to refuse', () => {
    const bytes = manifest([entry({ status: 2, content: 1, path: 's3://b/del.parquet', rows: 1 })]);
    expect(readManifest(bytes, 'm.avro')).toEqual([]);
  });

  it('refuses a data file that is not Parquet, naming it', () => {
    const bytes = manifest([entry({ status: 1, path: 's3://b/a.orc', format: 'ORC', rows: 1 })]);
    expect(() => readManifest(bytes, 'm.avro')).toThrow(
      's3://b/a.orc: file_format ORC (only PARQUET is read)',
    );
  });

  it('reads a manifest list, v1 (no content field) and v2', () => {
    const v1 = {
      type: 'record',
      name: 'manifest_file',
      fields: [
        { name: 'manifest_path', type: 'string' },
        { name: 'manifest_length', type: 'long' },
        { name: 'partition_spec_id', type: 'int' },
      ],
    };
    const v2 = {
      ...v1,
      fields: [
        ...v1.fields,
        { name: 'content', type: 'int' },
        { name: 'sequence_number', type: 'long' },
      ],
    };
    const one = (path: string, content?: number): Uint8Array =>
      A.concat(
        A.str(path),
        A.long(10),
        A.int(0),
        ...(content === undefined ? [] : [A.int(content), A.long(7 + content)]),
      );
    expect(
      readManifestList(A.container({ schema: v1, blocks: [{ count: 1, data: one('m1') }] }), 'l'),
    ).toEqual([{ path: 'm1', content: 0, partitionSpecId: 0, sequenceNumber: 0n }]);
    expect(
      readManifestList(
        A.container({
          schema: v2,
          blocks: [{ count: 2, data: A.concat(one('m1', 0), one('d1', 1)) }],
        }),
        'l',
      ),
    ).toEqual([
      { path: 'm1', content: 0, partitionSpecId: 0, sequenceNumber: 7n },
      { path: 'd1', content: 1, partitionSpecId: 0, sequenceNumber: 8n },
    ]);
  });
});
