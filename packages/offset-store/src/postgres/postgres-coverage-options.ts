import type pg from 'pg';
import { parseConfig } from '@thalweg/connector-core';
import { z } from 'zod';
import { isPool, sinkList, sqlSchemaName } from '../store-options.js';
import type { PostgresCoverageOptions } from './postgres-coverage.js';

const postgresCoverageSchema = z.strictObject(
  {
    pool: z.custom<pg.Pool | string>(
      (v) => (typeof v === 'string' && v.length > 0) || isPool(v),
      'must be a pg.Pool or a non-empty connection string',
    ),
    schema: sqlSchemaName,
    sinks: sinkList,
  },
  { error: 'must be an object { pool, schema?, sinks }' },
);

export type PostgresCoverageSettings = Required<PostgresCoverageOptions>;

/** Validates the options of `PostgresCoverage.open`; a refusal names `postgresCoverage.<field>`. */
export function parsePostgresCoverageOptions(input: unknown): PostgresCoverageSettings {
  return parseConfig(postgresCoverageSchema, input, 'postgresCoverage');
}
