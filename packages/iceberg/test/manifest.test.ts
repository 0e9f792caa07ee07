import { describe, expect, it } from 'vitest';
import { readManifest, readManifestList } from '../src/index.js';
import * as A from './support/avro-bytes.js';
import { entry, le8, manifest } from './support/manifest-bytes.js';

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
