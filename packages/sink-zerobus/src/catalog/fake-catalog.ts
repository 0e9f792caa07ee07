import type { Catalog, TableColumn, TableDescription } from './catalog.js';

/** An in-memory catalog whose properties tests can change under a running sink. */
export class FakeCatalog implements Catalog {
  private readonly tables = new Map<string, TableDescription>();
  /** Every describe call, so tests can prove a check was not cached. */
  describes = 0;

  async ensureTable(
    name: string,
    columns: readonly TableColumn[],
    properties: Readonly<Record<string, string>>,
  ): Promise<void> {
    if (this.tables.has(name)) return;
    this.tables.set(name, {
      name,
      columns: [...columns],
      properties: { ...properties },
      minReaderVersion: 3,
      minWriterVersion: 7,
    });
  }

  async describe(name: string): Promise<TableDescription | null> {
    this.describes += 1;
    const t = this.tables.get(name);
    return t === undefined ? null : structuredClone(t);
  }

  /** Changes a table as an operator would (ALTER TABLE ... SET TBLPROPERTIES). */
  alter(name: string, change: Partial<Omit<TableDescription, 'name'>>): void {
    const t = this.tables.get(name);
    if (t === undefined) throw new Error(`no table ${name}`);
    this.tables.set(name, {
      ...t,
      ...change,
      properties: { ...t.properties, ...change.properties },
    });
  }
}
