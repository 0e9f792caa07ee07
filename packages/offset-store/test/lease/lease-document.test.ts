import { describe, expect, it } from 'vitest';
import { decodeLease, encodeLease } from '../../src/lease/lease-document.js';
import type { LeaseRecord } from '../../src/lease/lease-record.js';

const held: LeaseRecord = {
  holder: 'worker-1',
  token: 1_767_225_600_000,
  expiresAt: 1_767_225_630_000,
  state: 'held',
  completedAt: null,
};
const where = 's3://b/leases/w%2F1.json';

describe('lease document', () => {
  it('round-trips every state', () => {
    for (const record of [
      held,
      { ...held, state: 'released' as const },
      { ...held, state: 'complete' as const, completedAt: held.expiresAt - 5 },
    ]) {
      expect(decodeLease(encodeLease('w/1', record), 'w/1', where)).toEqual(record);
    }
  });

  it('names the key and the object of anything it cannot read', () => {
    const doc = JSON.parse(encodeLease('w/1', held)) as Record<string, unknown>;
    const cases: [string, string][] = [
      ['', 'is not JSON'],
      ['null', 'is not a JSON object'],
      [JSON.stringify({ ...doc, format: undefined }), 'is not a thalweg.lease object'],
      [JSON.stringify({ ...doc, version: 0 }), 'has no valid version'],
      [JSON.stringify({ ...doc, key: 'w/2' }), 'belongs to key "w/2"'],
      [JSON.stringify({ ...doc, holder: '' }), 'has no holder'],
      [JSON.stringify({ ...doc, token: 1.5 }), 'has no positive integer token'],
      [JSON.stringify({ ...doc, expiresAt: '1' }), 'has no valid expiresAt'],
      [JSON.stringify({ ...doc, state: 'free' }), 'has unknown state "free"'],
      [JSON.stringify({ ...doc, completedAt: 5 }), 'has a completedAt that does not match'],
    ];
    for (const [body, why] of cases) {
      expect(() => decodeLease(body, 'w/1', where), body).toThrow(
        expect.objectContaining({ code: 'TWG_LEASE_CORRUPT' }) as Error,
      );
      expect(() => decodeLease(body, 'w/1', where)).toThrow(`lease "w/1" (${where}) ${why}`);
    }
  });

  it('refuses a newer format version rather than rewrite it', () => {
    const newer = JSON.stringify({ ...JSON.parse(encodeLease('w/1', held)), version: 2 });
    expect(() => decodeLease(newer, 'w/1', where)).toThrow(
      expect.objectContaining({ code: 'TWG_LEASE_FORMAT_NEWER' }) as Error,
    );
  });
});
