import { describe, expect, it } from 'vitest';
import { findSnapshot, parseTableMetadata, quoteSnapshotIds } from '../src/index.js';

const BIG = '9007199254740993'; // 2^53 + 1: a double rounds it to 2^53
const V2 = `{
  "format-version": 2, "table-uuid": "u", "location": "s3://b/t",
  "current-schema-id": 1,
  "schemas": [
    {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "offset", "required": true, "type": "long"}]},
    {"type": "struct", "schema-id": 1, "fields": [
      {"id": 1, "name": "offset", "required": true, "type": "long"},
      {"id": 2, "name": "tags", "required": false, "type": {"type": "list", "element-id": 3, "element": "string", "element-required": false}}]}
  ],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": []}],
  "current-snapshot-id": ${BIG},
  "snapshots": [
    {"snapshot-id": -1234567890123456789, "timestamp-ms": 1000, "manifest-list": "s3://b/t/m0.avro",
     "summary": {"operation": "append", "added-records": "3"}, "schema-id": 0},
    {"snapshot-id": ${BIG}, "parent-snapshot-id": -1234567890123456789, "sequence-number": 2,
     "timestamp-ms": 2000, "manifest-list": "s3://b/t/m1.avro",
     "summary": {"operation": "append", "added-records": "4"}}
  ],
  "properties": {"note": "a \\"snapshot-id\\": 5 inside a string stays as it is"}
}`;

const parse = (text: string): ReturnType<typeof parseTableMetadata> =>
  parseTableMetadata(JSON.parse(quoteSnapshotIds(text)), 'ns.t');

describe('table metadata', () => {
  it('keeps 64-bit snapshot ids exact, and leaves strings alone', () => {
    const quoted = JSON.parse(quoteSnapshotIds(V2)) as { properties: { note: string } };
    expect(quoted.properties.note).toBe('a "snapshot-id": 5 inside a string stays as it is');
    const m = parse(V2);
    expect(m.currentSnapshotId).toBe(BigInt(BIG));
    expect(m.snapshots.map((s) => s.id)).toEqual([-1234567890123456789n, BigInt(BIG)]);
    expect(m.snapshots[1]?.parentId).toBe(-1234567890123456789n);
  });

  it('reads format v2: schemas, the current snapshot, its time and summary', () => {
    const m = parse(V2);
    expect(m.formatVersion).toBe(2);
    expect(m.currentSchemaId).toBe(1);
    expect(m.schemas[1]?.fields.map((f) => f.name)).toEqual(['offset', 'tags']);
    const s = findSnapshot(m, 'ns.t');
    expect(s).toMatchObject({
      timestampMs: 2000,
      sequenceNumber: 2,
      manifestList: 's3://b/t/m1.avro',
    });
    expect(s.summary).toEqual({ operation: 'append', 'added-records': '4' });
    expect(findSnapshot(m, 'ns.t', -1234567890123456789n).schemaId).toBe(0);
    expect(() => findSnapshot(m, 'ns.t', 5n)).toThrow(
      'TWG_ICEBERG_METADATA_INVALID: ns.t: no snapshot 5',
    );
  });

  it('reads format v1: one schema, one partition spec, -1 for no snapshot', () => {
    const m = parse(`{"format-version": 1, "location": "file:///t",
      "schema": {"type": "struct", "fields": [{"id": 1, "name": "x", "required": false, "type": "int"}]},
      "partition-spec": [{"source-id": 1, "field-id": 1000, "name": "x", "transform": "identity"}],
      "current-snapshot-id": -1}`);
    expect(m.schemas).toHaveLength(1);
    expect(m.partitionSpecs).toEqual([
      {
        'spec-id': 0,
        fields: [{ 'source-id': 1, 'field-id': 1000, name: 'x', transform: 'identity' }],
      },
    ]);
    expect(m.currentSnapshotId).toBeUndefined();
    expect(() => findSnapshot(m, 'ns.t')).toThrow('ns.t: the table has no snapshot yet');
  });

  it('refuses format version 3 rather than read it as 2', () => {
    expect(() => parse(V2.replace('"format-version": 2', '"format-version": 3'))).toThrow(
      /TWG_ICEBERG_UNSUPPORTED: ns.t: format-version 3/,
    );
  });

  it('names the path of a field that does not parse', () => {
    expect(() => parse(V2.replace('"timestamp-ms": 2000', '"timestamp-ms": "soon"'))).toThrow(
      /TWG_ICEBERG_METADATA_INVALID: ns.t: table metadata at snapshots.1.timestamp-ms/,
    );
  });

  it('refuses a current snapshot or schema id that names nothing', () => {
    expect(() =>
      parse(V2.replace(`"current-snapshot-id": ${BIG}`, '"current-snapshot-id": 7')),
    ).toThrow('current-snapshot-id 7 names no snapshot');
    expect(() => parse(V2.replace('"current-schema-id": 1', '"current-schema-id": 9'))).toThrow(
      'current-schema-id 9 names no schema',
    );
  });
});
