import { describe, expect, it } from 'vitest';
import { FakeCatalog } from '../../src/catalog/fake-catalog.js';
import {
  checkPrimaryRawPreconditions,
  PRIMARY_RAW_TABLE_PROPERTIES,
} from '../../src/catalog/precondition.js';

const T = 'main.raw.events';
const COLUMNS = [{ name: 'n', type: 'int32', nullable: false }] as const;

async function catalog(): Promise<FakeCatalog> {
  const c = new FakeCatalog();
  await c.ensureTable(T, COLUMNS, PRIMARY_RAW_TABLE_PROPERTIES);
  return c;
}

describe('primary-raw preconditions', () => {
  it('pass for a table provisioned with the required properties', async () => {
    await expect(checkPrimaryRawPreconditions(await catalog(), T)).resolves.toMatchObject({
      name: T,
    });
  });

  it.each([
    [
      { properties: { 'delta.enableDeletionVectors': 'true' } },
      /delta\.enableDeletionVectors is true; it must not be true/,
    ],
    [
      { properties: { 'delta.enableIcebergCompatV2': 'false' } },
      /delta\.enableIcebergCompatV2 is false/,
    ],
    [
      { properties: { 'delta.universalFormat.enabledFormats': '' } },
      /delta\.universalFormat\.enabledFormats is ; it must include iceberg/,
    ],
    [{ properties: { 'delta.columnMapping.mode': 'none' } }, /delta\.columnMapping\.mode is none/],
    [{ minWriterVersion: 5 }, /minWriterVersion is 5; it must be at least 7/],
    [{ minReaderVersion: 1 }, /minReaderVersion is 1/],
  ])('refuse the role naming the failing property (%#)', async (change, message) => {
    const c = await catalog();
    c.alter(T, change);
    await expect(checkPrimaryRawPreconditions(c, T)).rejects.toThrow(message);
  });

  it('refuse an unregistered table', async () => {
    await expect(
      checkPrimaryRawPreconditions(new FakeCatalog(), 'main.raw.missing'),
    ).rejects.toThrow(/not registered/);
  });

  it('are re-checked against the live table every time, never cached', async () => {
    const c = await catalog();
    await checkPrimaryRawPreconditions(c, T);
    c.alter(T, { properties: { 'delta.enableDeletionVectors': 'true' } });
    await expect(checkPrimaryRawPreconditions(c, T)).rejects.toThrow(/enableDeletionVectors/);
    expect(c.describes).toBe(2);
  });
});
