import { LeaseError } from './lease-errors.js';
import type { LeaseRecord } from './lease-record.js';

export const LEASE_DOCUMENT_FORMAT = 'thalweg.lease';
export const LEASE_DOCUMENT_VERSION = 1;

/**
 * The object of one lease key:
 * `{ format, version, key, holder, token, expiresAt, state, completedAt }`.
 * `key` is repeated inside so that an object copied or written under the
 * wrong name is recognised as foreign instead of being taken over.
 */
export function encodeLease(key: string, record: LeaseRecord): string {
  return JSON.stringify({
    format: LEASE_DOCUMENT_FORMAT,
    version: LEASE_DOCUMENT_VERSION,
    key,
    holder: record.holder,
    token: record.token,
    expiresAt: record.expiresAt,
    state: record.state,
    completedAt: record.completedAt,
  });
}

/**
 * Parses and validates a stored lease. Anything off is TWG_LEASE_CORRUPT
 * (or TWG_LEASE_FORMAT_NEWER) naming the key and the object; the caller
 * writes nothing over it.
 */
export function decodeLease(body: string, key: string, where: string): LeaseRecord {
  const named = `lease ${JSON.stringify(key)} (${where})`;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (cause) {
    throw new LeaseError('TWG_LEASE_CORRUPT', `${named} is not JSON; it was left as it was`, cause);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return corrupt(named, 'is not a JSON object');
  }
  const raw = value as Record<string, unknown>;
  if (raw['format'] !== LEASE_DOCUMENT_FORMAT)
    corrupt(named, `is not a ${LEASE_DOCUMENT_FORMAT} object`);
  const version = raw['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    corrupt(named, 'has no valid version');
  }
  if (version > LEASE_DOCUMENT_VERSION) {
    throw new LeaseError(
      'TWG_LEASE_FORMAT_NEWER',
      `${named} has format version ${version}; this code knows ${LEASE_DOCUMENT_VERSION} and will not rewrite it`,
    );
  }
  if (raw['key'] !== key) corrupt(named, `belongs to key ${JSON.stringify(raw['key'])}`);
  const { holder, token, expiresAt, state, completedAt } = raw;
  if (typeof holder !== 'string' || holder === '') corrupt(named, 'has no holder');
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token <= 0) {
    corrupt(named, 'has no positive integer token');
  }
  if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt) || expiresAt < 0) {
    corrupt(named, 'has no valid expiresAt');
  }
  if (state !== 'held' && state !== 'released' && state !== 'complete') {
    corrupt(named, `has unknown state ${JSON.stringify(state)}`);
  }
  const completed =
    typeof completedAt === 'number' && Number.isSafeInteger(completedAt) && completedAt >= 0;
  if (state === 'complete' ? !completed : completedAt !== null) {
    corrupt(named, 'has a completedAt that does not match its state');
  }
  return {
    holder,
    token,
    expiresAt,
    state,
    completedAt: state === 'complete' ? (completedAt as number) : null,
  };
}

function corrupt(named: string, what: string): never {
  throw new LeaseError('TWG_LEASE_CORRUPT', `${named} ${what}; it was left as it was`);
}
