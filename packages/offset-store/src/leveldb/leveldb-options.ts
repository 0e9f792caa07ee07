import { parseConfig, type SinkId } from '@thalweg/connector-core';
import { z } from 'zod';
import { nonEmptyText, sinkList } from '../store-options.js';

export interface LevelDbCoverageOptions {
  /** The directory of the database; created when missing. One opener at a time. */
  readonly location: string;
  readonly sinks: readonly SinkId[];
}

const levelDbCoverageSchema = z.strictObject(
  { location: nonEmptyText('a non-empty directory path'), sinks: sinkList },
  { error: 'must be an object { location, sinks }' },
);

/** Validates the options of `LevelDbCoverage.open`; a refusal names `levelDbCoverage.<field>`. */
export function parseLevelDbCoverageOptions(input: unknown): LevelDbCoverageOptions {
  return parseConfig(levelDbCoverageSchema, input, 'levelDbCoverage');
}
