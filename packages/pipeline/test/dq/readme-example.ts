import { checked, FileDqAudit } from '../../src/index.js';
import { z } from 'zod';

interface Order {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
}

const orderShape = z.object({ id: z.string().min(1), currency: z.enum(['EUR', 'USD']) });

// Pass it as `secondary({ open, derive: orders })`, and the spec's `dqAudit`.
export const orders = checked((r) => JSON.parse(new TextDecoder().decode(r.value)) as Order)
  .check('positive amount', (o) => o.amount > 0 || `amount ${o.amount} is not positive`)
  .schema('order shape', orderShape)
  .build((rows, passing) => rows.map((o, i) => ({ ...o, offset: passing.records[i]?.offset })));

// What an operator reads: per check, passed and failed over every window.
export async function dqTotals(path: string, sink: string) {
  const audit = await FileDqAudit.open({ path });
  try {
    return await audit.totals(sink);
  } finally {
    await audit.close();
  }
}
