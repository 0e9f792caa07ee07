import type { SourceRecord } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/dedup/content-hash.js';
import { dedupConfigSchema } from '../../src/dedup/dedup-config.js';
import { HashThread } from '../../src/dedup/hash-thread.js';

const record = (offset: number, value: string, tombstone = false): SourceRecord => ({
  offset,
  key: null,
  value: Buffer.from(value),
  timestamp: 0,
  headers: [],
  ...(tombstone ? { tombstone: true } : {}),
});

const records = [
  record(0, JSON.stringify({ orderId: 'o1', eventTime: 1, attempt: 1 })),
  record(1, JSON.stringify({ eventTime: 1, orderId: 'o1', attempt: 2 })),
  record(2, 'not json'),
  record(3, JSON.stringify({ orderId: 'o2' })),
  record(4, '', true),
  record(5, JSON.stringify({ orderId: 'ø€𝄞', eventTime: 2 })),
];

const byFields = dedupConfigSchema.parse({
  key: { fields: ['orderId', 'eventTime'] },
  windowMs: 60_000,
  maxEntries: 10,
  declared: { naturalKey: ['orderId'] },
});
const byPayload = dedupConfigSchema.parse({
  key: 'payload',
  windowMs: 60_000,
  maxEntries: 10,
  declared: { unique: true },
});

describe('HashThread', () => {
  it('gives each record the key the ingest thread would, on the hash thread and after it stopped', async () => {
    const lines: string[] = [];
    const thread = new HashThread((l) => lines.push(l));
    for (const config of [byFields, byPayload]) {
      const want = records.map((r) => contentHash(config, r));
      expect(await thread.hash(config.key, records)).toEqual(want);
      await thread.close();
      expect(await thread.hash(config.key, records)).toEqual(want);
    }
    // The compiled worker exists (`tsc -b` ran): no fallback was logged.
    expect(lines).toEqual([]);
  });

  it('hashes the declared fields in the declared order, so key order in the JSON does not matter', () => {
    const [a, b, notJson, missing, tombstone, unicode] = records.map((r) =>
      contentHash(byFields, r),
    );
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).toBe(a);
    expect([notJson, missing]).toEqual([null, null]);
    expect(tombstone).toBeNull();
    expect(unicode).not.toBe(a);
    expect(contentHash(byPayload, records[0] as SourceRecord)).not.toBe(
      contentHash(byPayload, records[1] as SourceRecord),
    );
    expect(contentHash(byPayload, records[4] as SourceRecord)).toBeNull();
  });

  it('answers a large piece whose buffers are transferred to the thread', async () => {
    const thread = new HashThread(() => undefined);
    const many = Array.from({ length: 5000 }, (_, i) =>
      record(
        i,
        JSON.stringify({ orderId: `o${i % 1000}`, eventTime: i % 1000, pad: 'x'.repeat(200) }),
      ),
    );
    const keys = await thread.hash(byFields.key, many);
    expect(new Set(keys).size).toBe(1000);
    expect(keys[1000]).toBe(keys[0]);
    await thread.close();
  });
});
