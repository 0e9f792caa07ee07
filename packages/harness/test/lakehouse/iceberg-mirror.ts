// The "metadata commit" of the lakehouse test: what the fake Zerobus server
// acknowledged (its durable log, standing in for Delta commits) is appended
// to the Iceberg table by pyiceberg when the test says, so the test decides
// how far the Iceberg view trails the writes, and may commit a batch's rows
// in two snapshots.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readFakeServerBatches } from '@thalweg/sink-zerobus';
import { iceberg, icebergScript } from '@thalweg/test-services';
import { RecordBatchStreamWriter, tableFromIPC, type RecordBatch } from 'apache-arrow';
import type { LakehouseNames } from '../../src/lakehouse-topology.js';

const run = promisify(execFile);

export class IcebergMirror {
  /** Rows of the server's batches already committed to Iceberg, per batch index. */
  private readonly done: number[] = [];

  constructor(
    private readonly serverDir: string,
    private readonly names: LakehouseNames,
  ) {}

  /** Batches the server acknowledged so far. */
  async acknowledged(): Promise<RecordBatch[]> {
    return (await readFakeServerBatches(this.serverDir)).flatMap(
      (ipc) => tableFromIPC(ipc).batches,
    );
  }

  /**
   * Commits, as one Iceberg snapshot, the rows not committed yet of the
   * first `batches` acknowledged batches, and `rowsOfNext` rows of the one
   * after them (a batch split across two commits).
   */
  async commit(batches: number, rowsOfNext = 0): Promise<void> {
    const all = await this.acknowledged();
    const parts: RecordBatch[] = [];
    for (let i = 0; i < Math.min(all.length, batches + (rowsOfNext > 0 ? 1 : 0)); i++) {
      const b = all[i] as RecordBatch;
      const upTo = i < batches ? b.numRows : Math.min(rowsOfNext, b.numRows);
      const from = this.done[i] ?? 0;
      if (upTo > from) parts.push(b.slice(from, upTo));
      this.done[i] = Math.max(from, upTo);
    }
    if (parts.length === 0) return;
    const dir = await mkdtemp(join(tmpdir(), 'twg-lake-mirror-'));
    try {
      const paths = await Promise.all(
        parts.map(async (b, i) => {
          const path = join(dir, `${i}.arrows`);
          await writeFile(path, RecordBatchStreamWriter.writeAll([b]).toUint8Array(true));
          return path;
        }),
      );
      const spec = { namespace: this.names.namespace, table: this.names.table, ipc: paths };
      const child = run(iceberg().python, [icebergScript('write_table.py'), '-'], {
        maxBuffer: 1 << 24,
      });
      child.child.stdin?.end(JSON.stringify(spec));
      await child;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
