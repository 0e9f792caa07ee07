import type { StreamField } from '../transport.js';

/** A column of a table as the catalog describes it. */
export interface TableColumn {
  readonly name: string;
  readonly type: StreamField['type'];
  readonly nullable: boolean;
}

/** What the catalog says about a table, read fresh each time it matters. */
export interface TableDescription {
  readonly name: string;
  readonly columns: readonly TableColumn[];
  /** Table properties (`delta.*`) as strings, the way the catalog reports them. */
  readonly properties: Readonly<Record<string, string>>;
  /** Delta protocol versions. */
  readonly minReaderVersion: number;
  readonly minWriterVersion: number;
}

/**
 * Table provisioning and description: the catalog boundary of the sink,
 * with a fake for tests and an adapter over a Databricks SQL session.
 */
export interface Catalog {
  /** Creates the table if it does not exist (never alters an existing one). */
  ensureTable(
    name: string,
    columns: readonly TableColumn[],
    properties: Readonly<Record<string, string>>,
  ): Promise<void>;
  /** Describes the table now; null when it is not registered. Never cached. */
  describe(name: string): Promise<TableDescription | null>;
}
