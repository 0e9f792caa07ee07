import type { Schema } from 'apache-arrow';
import type { BatchSchema } from './batch-schema.js';
import { ArrowBatchError } from './errors.js';

/**
 * Refuses a decoded schema that is not exactly the expected one: same
 * columns in the same order, same types (unit and time zone included), same
 * nullability. Exactly, because a sink table checks the same way.
 */
export function assertSchemaMatches(actual: Schema, expected: BatchSchema): void {
  // No metadata, as our schemas carry none: the Zerobus SDK compares schemas
  // with their metadata, and a key we never wrote is not ours to pass on.
  if (actual.metadata.size > 0)
    mismatch('(schema)', `carries metadata (${[...actual.metadata.keys()].join(', ')})`);
  for (const f of actual.fields)
    if (f.metadata.size > 0) mismatch(f.name, 'carries field metadata');
  const want = expected.arrow.fields;
  const got = actual.fields;
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    const w = want[i];
    const g = got[i];
    if (w === undefined || g === undefined) {
      const name = (w ?? g)?.name ?? `#${i}`;
      mismatch(name, w === undefined ? 'is not in the expected schema' : 'is missing');
    }
    if (w.name !== g.name) mismatch(w.name, `column ${i} is named "${g.name}"`);
    if (String(w.type) !== String(g.type)) {
      mismatch(w.name, `has type ${String(g.type)}, expected ${String(w.type)}`);
    }
    if (w.nullable !== g.nullable) {
      mismatch(w.name, `is ${g.nullable ? 'nullable' : 'non-nullable'}, expected the opposite`);
    }
  }
}

function mismatch(field: string, reason: string): never {
  throw new ArrowBatchError('TWG_ARROW_SCHEMA_MISMATCH', reason, { field });
}
