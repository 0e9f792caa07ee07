import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A fixture written by fixtures/make-fixtures.py (pyarrow: Arrow C++ wrote and validated it). */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(import.meta.dirname, 'fixtures', name)));
}
