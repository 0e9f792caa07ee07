import { z } from 'zod';
import { IcebergError } from './errors.js';

/**
 * The parts of Iceberg table metadata (the spec's "Table Metadata", format
 * versions 1 and 2) the read path needs: schemas, partition specs and
 * snapshots. Format version 3 is refused, not read as 2: it adds deletion
 * vectors and row lineage that a v2 reader would silently ignore.
 */

/** Snapshot ids are 64-bit; they arrive as decimal strings (see {@link quoteSnapshotIds}). */
const snapshotId = z
  .union([z.string().regex(/^-?\d+$/), z.number().int()])
  .transform((v) => BigInt(v));

const field = z.object({
  id: z.number().int(),
  name: z.string(),
  required: z.boolean(),
  /** A primitive type name (`long`, `string`, `decimal(9,2)`...) or a nested struct/list/map. */
  type: z.union([z.string(), z.object({ type: z.string() }).loose()]),
});

const schema = z.object({
  'schema-id': z.number().int().default(0),
  fields: z.array(field),
});

const partitionSpec = z.object({
  'spec-id': z.number().int(),
  fields: z.array(
    z.object({
      'source-id': z.number().int(),
      'field-id': z.number().int().optional(),
      name: z.string(),
      transform: z.string(),
    }),
  ),
});

const snapshot = z.object({
  'snapshot-id': snapshotId,
  'parent-snapshot-id': snapshotId.optional(),
  'sequence-number': z.number().int().optional(),
  'timestamp-ms': z.number().int(),
  'manifest-list': z.string().optional(),
  manifests: z.array(z.string()).optional(),
  summary: z.object({ operation: z.string() }).catchall(z.string()),
  'schema-id': z.number().int().optional(),
});

const metadata = z.object({
  'format-version': z.union([z.literal(1), z.literal(2)]),
  'table-uuid': z.string().optional(),
  location: z.string(),
  schema: schema.optional(),
  schemas: z.array(schema).optional(),
  'current-schema-id': z.number().int().optional(),
  'partition-spec': z.array(partitionSpec.shape.fields.element).optional(),
  'partition-specs': z.array(partitionSpec).optional(),
  'default-spec-id': z.number().int().optional(),
  'current-snapshot-id': snapshotId.nullable().optional(),
  snapshots: z.array(snapshot).optional(),
});

export type IcebergField = z.infer<typeof field>;
export type IcebergSchema = z.infer<typeof schema>;
export type PartitionSpec = z.infer<typeof partitionSpec>;

/** One snapshot of a table: a commit, with the manifest list naming its files. */
export interface Snapshot {
  readonly id: bigint;
  readonly parentId: bigint | undefined;
  readonly sequenceNumber: number;
  /** When the snapshot was committed, in ms since the epoch. */
  readonly timestampMs: number;
  /** The Avro manifest list: every manifest of the table at this snapshot. */
  readonly manifestList: string;
  /** `operation` (append, overwrite, delete, replace) and the writer's counters, as strings. */
  readonly summary: Readonly<Record<string, string>>;
  readonly schemaId: number | undefined;
}

/** Table metadata, normalised over format versions 1 and 2. */
export interface TableMetadata {
  readonly formatVersion: 1 | 2;
  readonly location: string;
  readonly schemas: readonly IcebergSchema[];
  readonly currentSchemaId: number;
  readonly partitionSpecs: readonly PartitionSpec[];
  /** The current snapshot, or undefined for a table nothing was ever committed to. */
  readonly currentSnapshotId: bigint | undefined;
  readonly snapshots: readonly Snapshot[];
}

const ID_KEYS = /(?<!\\)"(snapshot-id|parent-snapshot-id|current-snapshot-id)"(\s*):(\s*)(-?\d+)/g;

/**
 * Puts the 64-bit snapshot ids of a metadata JSON text in quotes, so
 * `JSON.parse` keeps every digit: a double holds 53 bits, and a rounded id
 * names another snapshot or none. (Node 20's JSON.parse has no access to a
 * number's source text.) Keys are matched only where they are keys: a quote
 * inside a string is escaped, so `\"snapshot-id\"` in a property is left alone.
 */
export function quoteSnapshotIds(text: string): string {
  return text.replace(ID_KEYS, '"$1"$2:$3"$4"');
}

/**
 * Parses table metadata (already `JSON.parse`d from a text passed through
 * {@link quoteSnapshotIds}). `table` names the table in errors.
 */
export function parseTableMetadata(json: unknown, table: string): TableMetadata {
  const version = (json as { 'format-version'?: unknown } | null)?.['format-version'];
  if (typeof version === 'number' && version > 2) {
    throw new IcebergError(
      'TWG_ICEBERG_UNSUPPORTED',
      table,
      `format-version ${version} (this reader reads 1 and 2; v3 deletion vectors and row lineage would be ignored)`,
    );
  }
  const parsed = metadata.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    throw new IcebergError(
      'TWG_ICEBERG_METADATA_INVALID',
      table,
      `table metadata ${path === '' ? '' : `at ${path} `}${issue?.message ?? 'does not parse'}`,
      { cause: parsed.error },
    );
  }
  const m = parsed.data;
  const schemas = m.schemas ?? (m.schema === undefined ? [] : [m.schema]);
  const currentSchemaId = m['current-schema-id'] ?? schemas[0]?.['schema-id'] ?? 0;
  if (!schemas.some((s) => s['schema-id'] === currentSchemaId)) {
    throw new IcebergError(
      'TWG_ICEBERG_METADATA_INVALID',
      table,
      `current-schema-id ${currentSchemaId} names no schema`,
    );
  }
  const specs =
    m['partition-specs'] ??
    (m['partition-spec'] === undefined ? [] : [{ 'spec-id': 0, fields: m['partition-spec'] }]);
  const snapshots = (m.snapshots ?? []).map((s): Snapshot => {
    const manifestList = s['manifest-list'];
    if (manifestList === undefined) {
      throw new IcebergError(
        'TWG_ICEBERG_UNSUPPORTED',
        table,
        `snapshot ${s['snapshot-id']} lists its manifests inline (a v1 form without a manifest list)`,
      );
    }
    return {
      id: s['snapshot-id'],
      parentId: s['parent-snapshot-id'],
      sequenceNumber: s['sequence-number'] ?? 0,
      timestampMs: s['timestamp-ms'],
      manifestList,
      summary: s.summary,
      schemaId: s['schema-id'],
    };
  });
  // v1 writes -1 for "no snapshot"
  const current = m['current-snapshot-id'];
  const currentSnapshotId =
    current === null || current === undefined || current === -1n ? undefined : current;
  if (currentSnapshotId !== undefined && !snapshots.some((s) => s.id === currentSnapshotId)) {
    throw new IcebergError(
      'TWG_ICEBERG_METADATA_INVALID',
      table,
      `current-snapshot-id ${currentSnapshotId} names no snapshot`,
    );
  }
  return {
    formatVersion: m['format-version'],
    location: m.location,
    schemas,
    currentSchemaId,
    partitionSpecs: specs,
    currentSnapshotId,
    snapshots,
  };
}

/** The snapshot with this id, or the current one; fails naming the table when there is none. */
export function findSnapshot(meta: TableMetadata, table: string, id?: bigint): Snapshot {
  const want = id ?? meta.currentSnapshotId;
  if (want === undefined) {
    throw new IcebergError('TWG_ICEBERG_METADATA_INVALID', table, 'the table has no snapshot yet');
  }
  const found = meta.snapshots.find((s) => s.id === want);
  if (found === undefined) {
    throw new IcebergError('TWG_ICEBERG_METADATA_INVALID', table, `no snapshot ${want}`);
  }
  return found;
}

/** The schema a snapshot was written with (the current one when it does not say). */
export function snapshotSchema(meta: TableMetadata, snap: Snapshot): IcebergSchema {
  const id = snap.schemaId ?? meta.currentSchemaId;
  const found = meta.schemas.find((s) => s['schema-id'] === id);
  if (found === undefined) {
    throw new IcebergError(
      'TWG_ICEBERG_METADATA_INVALID',
      `snapshot ${snap.id}`,
      `schema-id ${id} names no schema`,
    );
  }
  return found;
}
