import { sinkId } from '@thalweg/connector-core';
import { InMemoryCoverage } from '@thalweg/offset-store';
import { build, keepOpen } from './harness.js';
import { logsOf, MemoryStoreSource } from './memory-sources.js';

/**
 * Raw holds `records` offsets of each partition t/0.. that the secondary `sec0`
 * never got (its submits failed, so the live lane shed them): the starting
 * point of a recovery test. The coverage store and raw's records are shared
 * with the pipeline the test builds next.
 */
export async function ingestWithoutSecondary(records: number, partitions = 1) {
  const coverage = keepOpen(new InMemoryCoverage({ sinks: [sinkId('raw'), sinkId('sec0')] }));
  const rawHeld = new Map<string, Map<number, Uint8Array>>();
  await (
    await build(new MemoryStoreSource(logsOf('t', partitions, records), 10), {
      coverage,
      rawHeld,
      secondaries: 1,
      secondary: (s) => (s.failSubmits = true),
      config: { recovery: { role: 'ingest' } },
    })
  ).pipeline.run();
  return { coverage, rawHeld };
}
