import { randomBytes } from 'node:crypto';

/**
 * A name no other test run uses (topics, groups, tables, buckets), so tests
 * never see each other's data and need no cleanup to stay independent.
 * Lower-case letters, digits and dashes: valid as a Kafka topic, an S3
 * bucket and (quoted or with dashes replaced) a Postgres identifier.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** The same, with underscores, for unquoted SQL identifiers. */
export function uniqueIdentifier(prefix: string): string {
  return uniqueName(prefix).replaceAll('-', '_');
}
