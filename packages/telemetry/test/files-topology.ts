import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { fakeZerobus, fromJson, zerobus } from '@thalweg/sink-zerobus';
import { files } from '@thalweg/source-files';
import { BatchSchema, column } from '@thalweg/stream-arrow';

interface Order {
  readonly id: string;
  readonly amount: number;
}

const orders = BatchSchema.define({
  fields: [
    { name: 'id', type: column.utf8, nullable: false },
    { name: 'amount', type: column.int64, nullable: false },
  ],
  recordId: 'hex',
});

/**
 * A small real topology with no service: ndjson files -> raw segments ->
 * a fake Zerobus table. `lines` go into one file; a line that is not JSON
 * is quarantined by the secondary.
 */
export async function filesTopology(lines: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'twg-telemetry-'));
  mkdirSync(join(dir, 'in'));
  writeFileSync(join(dir, 'in', 'orders.ndjson'), `${lines.join('\n')}\n`);
  return openTopology({
    source: files({
      format: 'ndjson',
      files: { kind: 'directory', directory: join(dir, 'in'), extension: '.ndjson' },
    }),
    raw: rawSegments({ dir: join(dir, 'raw') }),
    secondaries: {
      'zerobus-orders': zerobus({
        table: 'main.shop.orders',
        schema: orders,
        transport: fakeZerobus(),
        row: fromJson((o: Order) => ({ id: o.id, amount: BigInt(o.amount) })),
      }),
    },
    log: () => undefined,
  });
}
