import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FileDqAudit } from '../../src/index.js';
import { dqTotals, orders } from './readme-example.js';
import { tempFiles } from './temp-files.js';

const tempPath = tempFiles('twg-dq-readme-');

const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

describe("README's data-quality example", () => {
  it('is this file, word for word, so tsc -b checks the README block', async () => {
    const readme = await readFile(new URL('../../../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Data-quality checks'));
    const block = /```ts\n([\s\S]*?)```\n/.exec(section)?.[1];
    const example = await readFile(new URL('./readme-example.ts', import.meta.url), 'utf8');
    expect(block).toBe(example.replace("from '../../src/index.js'", "from '@thalweg/pipeline'"));
  });

  it('quarantines what its checks refuse and reads the totals back', async () => {
    const out = orders({
      span: { topic: 'orders', partition: 0, start: 0, end: 3 },
      records: [
        { id: 'a', amount: 10, currency: 'EUR' },
        { id: 'b', amount: -1, currency: 'EUR' },
        { id: 'c', amount: 3, currency: 'GBP' },
      ].map((v, offset) => ({ offset, key: null, value: encode(v), timestamp: 0, headers: [] })),
    });
    expect(out.batch).toEqual([{ id: 'a', amount: 10, currency: 'EUR', offset: 0 }]);
    expect(out.quarantined.map((n) => [n.offset, n.reason, n.detail])).toEqual([
      [1, 'dq', "dq check 'positive amount' failed: amount -1 is not positive"],
      [2, 'dq', expect.stringMatching(/^dq check 'order shape' failed at currency: /)],
    ]);
    const path = await tempPath('dq-audit.jsonl');
    const audit = await FileDqAudit.open({ path });
    await audit.record(
      Object.entries(out.dq ?? {}).map(([check, c]) => ({
        sink: 'orders-pg',
        span: { topic: 'orders', partition: 0, start: 0, end: 3 },
        check,
        ...c,
      })),
    );
    await audit.close();
    expect(await dqTotals(path, 'orders-pg')).toEqual({
      'positive amount': { passed: 2, failed: 1 },
      'order shape': { passed: 2, failed: 1 },
    });
  });
});
