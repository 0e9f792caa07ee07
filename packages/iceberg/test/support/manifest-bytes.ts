// Iceberg manifests and manifest lists built by hand with avro-bytes, for
// the tests that need one without a catalog.
import * as A from './avro-bytes.js';

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

export const le8 = (v: bigint): Uint8Array => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, v, true);
  return out;
};

export function entry(o: {
  status: number;
  content?: number;
  path: string;
  format?: string;
  rows: number;
  /** Shorthand for field 2's (the offset's) bounds. */
  lo?: bigint;
  hi?: bigint;
  /** Bounds by field id, as serialized. */
  lower?: ReadonlyMap<number, Uint8Array>;
  upper?: ReadonlyMap<number, Uint8Array>;
}): Uint8Array {
  const map = (
    m: ReadonlyMap<number, Uint8Array> | undefined,
    v: bigint | undefined,
  ): Uint8Array => {
    const all = new Map(m);
    if (v !== undefined) all.set(2, le8(v));
    return all.size === 0
      ? A.union(0)
      : A.union(1, A.block([...all].map(([k, b]) => A.concat(A.int(k), A.bytes(b)))));
  };
  return A.concat(
    A.int(o.status),
    A.union(1, A.long(2n ** 62n)),
    A.int(o.content ?? 0),
    A.str(o.path),
    A.str(o.format ?? 'PARQUET'),
    A.long(o.rows),
    A.long(1000),
    map(o.lower, o.lo),
    map(o.upper, o.hi),
  );
}

export const manifest = (entries: Uint8Array[]): Uint8Array =>
  A.container({
    schema: MANIFEST,
    codec: 'deflate',
    blocks: [{ count: entries.length, data: A.concat(...entries) }],
  });

export const le4 = (v: number): Uint8Array => {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, v, true);
  return out;
};

const MANIFEST_LIST = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'manifest_path', type: 'string' },
    { name: 'manifest_length', type: 'long' },
    { name: 'partition_spec_id', type: 'int' },
    { name: 'content', type: 'int' },
    { name: 'sequence_number', type: 'long' },
  ],
};

/** A v2 manifest list naming these manifests (content 0: data, 1: deletes). */
export function manifestList(
  manifests: readonly { path: string; content?: number; sequence?: bigint }[],
): Uint8Array {
  return A.container({
    schema: MANIFEST_LIST,
    codec: 'deflate',
    blocks: [
      {
        count: manifests.length,
        data: A.concat(
          ...manifests.map((m) =>
            A.concat(
              A.str(m.path),
              A.long(100),
              A.int(0),
              A.int(m.content ?? 0),
              A.long(m.sequence ?? 1n),
            ),
          ),
        ),
      },
    ],
  });
}
