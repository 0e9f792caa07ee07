import type { Source } from '@thalweg/connector-core';

/**
 * Reads `source` to its end or its failure, counting the records it yields,
 * then closes it: what a factory's `badInput().run` does with a source over
 * bad input (the failure is the rejection the clause checks).
 */
export async function readToEnd(source: Source): Promise<number> {
  let records = 0;
  try {
    for await (const batch of source.batches(new AbortController().signal)) {
      records += batch.records.length;
    }
  } finally {
    await source.close();
  }
  return records;
}
