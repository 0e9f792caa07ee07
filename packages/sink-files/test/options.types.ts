// Type tests, compiled by tsc -b (not a vitest file): the options are written
// out as an interface so their TSDoc reaches the .d.ts, and the zod schema
// stays the validator. tsc fails the moment the two disagree on a key, a
// type, or whether a key is optional.
import { agree, type Equals } from '@thalweg/test-services';
import type { z } from 'zod';
import type { RawSegmentSinkOptions, rawSegmentSinkOptionsSchema } from '../src/index.js';

type Schema = z.input<typeof rawSegmentSinkOptionsSchema>;

agree<Equals<RawSegmentSinkOptions, Schema>>();

// @ts-expect-error a key the schema does not have
agree<Equals<RawSegmentSinkOptions & { waitPerBatch?: number | undefined }, Schema>>();
type WrongRetry = Omit<RawSegmentSinkOptions, 'retry'> & {
  retry?: { maxAttempts?: number | undefined } | undefined;
};
// @ts-expect-error a nested key missing from the interface
agree<Equals<WrongRetry, Schema>>();
