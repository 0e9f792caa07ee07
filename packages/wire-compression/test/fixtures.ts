import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Test fixtures written by make-fixtures.py (pyarrow, i.e. Arrow C++ and its codecs). */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(import.meta.dirname, 'fixtures', name)));
}

export interface Expected {
  readonly pyarrow: string;
  readonly rows: number;
  readonly batches: readonly number[];
  readonly columns: Readonly<Record<string, readonly (string | number | boolean | null)[]>>;
}

export function expected(): Expected {
  return JSON.parse(
    readFileSync(join(import.meta.dirname, 'fixtures', 'expected.json'), 'utf8'),
  ) as Expected;
}
