import type { Catalog, TableDescription } from './catalog.js';
import { ZerobusSinkError } from '../errors.js';

/**
 * The table properties under which a Delta table written by Zerobus can be
 * read back through Iceberg, which recovery needs before the table may hold
 * the primary-raw role. Each names the property an operator would fix.
 */
const REQUIREMENTS: readonly {
  readonly property: string;
  readonly holds: (t: TableDescription) => boolean;
  readonly need: string;
}[] = [
  {
    property: 'delta.enableIcebergCompatV2',
    holds: (t) => t.properties['delta.enableIcebergCompatV2'] === 'true',
    need: 'must be true so Iceberg metadata is generated for the table',
  },
  {
    property: 'delta.universalFormat.enabledFormats',
    holds: (t) =>
      (t.properties['delta.universalFormat.enabledFormats'] ?? '')
        .split(',')
        .map((s) => s.trim())
        .includes('iceberg'),
    need: 'must include iceberg (UniForm) so the catalog serves the table to Iceberg readers',
  },
  {
    property: 'delta.columnMapping.mode',
    holds: (t) => ['name', 'id'].includes(t.properties['delta.columnMapping.mode'] ?? 'none'),
    need: 'must be name or id: Iceberg reads need column mapping',
  },
  {
    property: 'minReaderVersion',
    holds: (t) => t.minReaderVersion >= 2,
    need: 'must be at least 2 (column mapping)',
  },
  {
    property: 'minWriterVersion',
    holds: (t) => t.minWriterVersion >= 7,
    need: 'must be at least 7 (table features for IcebergCompatV2)',
  },
  {
    property: 'delta.enableDeletionVectors',
    holds: (t) => t.properties['delta.enableDeletionVectors'] !== 'true',
    need: 'must not be true: deletion vectors are incompatible with Iceberg reads and would remove recovery’s read path',
  },
];

/**
 * Checks, against the live table description, that `table` may hold the
 * primary-raw role.
 *
 * Read-after-write hazard, for whoever reads raw back (recovery): the
 * Iceberg metadata of a Delta commit is generated asynchronously, so a read
 * right after a write may see an older table state. `IcebergRaw` holds only
 * the batches a snapshot shows whole and reads a window from the snapshot
 * it planned from; the pipeline never completes a window raw did not give
 * back whole (ADR 0039).
 * Called every time the role matters — at start and before
 * each recovery pass — never cached, because a property can be changed under
 * a running pipeline. Refuses with the first failing property named.
 */
export async function checkPrimaryRawPreconditions(
  catalog: Catalog,
  table: string,
): Promise<TableDescription> {
  const t = await catalog.describe(table);
  if (t === null) {
    throw new ZerobusSinkError(
      'fatal-config',
      `primary-raw refused: table ${table} is not registered in the catalog`,
    );
  }
  const problem = rawPreconditionProblem(t);
  if (problem !== null) {
    throw new ZerobusSinkError('fatal-config', `primary-raw refused for ${table}: ${problem}`);
  }
  return t;
}

/**
 * The first table property of `t` that keeps it from the primary-raw role
 * (`delta.enableDeletionVectors is true; it must not be…`), or null: the
 * check of `checkPrimaryRawPreconditions` on a description already read.
 */
export function rawPreconditionProblem(t: TableDescription): string | null {
  for (const r of REQUIREMENTS) {
    if (!r.holds(t)) {
      const found = r.property.startsWith('min')
        ? String(r.property === 'minReaderVersion' ? t.minReaderVersion : t.minWriterVersion)
        : (t.properties[r.property] ?? 'unset');
      return `${r.property} is ${found}; it ${r.need}`;
    }
  }
  return null;
}

/** The properties a table needs to pass `checkPrimaryRawPreconditions`, for `ensureTable`. */
export const PRIMARY_RAW_TABLE_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  'delta.enableIcebergCompatV2': 'true',
  'delta.universalFormat.enabledFormats': 'iceberg',
  'delta.columnMapping.mode': 'name',
  'delta.enableDeletionVectors': 'false',
});
