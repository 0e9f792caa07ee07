import { type SinkId, type SourcePartition } from '@thalweg/connector-core';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { RawSegmentSink } from '@thalweg/sink-files';

export interface DemoAuditInput {
  readonly rawDir: string;
  readonly coverageDir: string;
  readonly cluster: string;
  readonly partitions: readonly SourcePartition[];
  readonly recordsPerPartition: number;
  readonly sinks: readonly SinkId[];
  readonly sourceName: string;
}

export interface DemoAudit {
  /** Offsets of the source that raw, read back from disk, does not hold. */
  readonly raw_missing: number;
  /** Stored cursors past what raw holds contiguously from 0: must be 0 (lead is loss). */
  readonly cursor_leads: number;
  readonly committed: Readonly<Record<string, number>>;
  /** Per sink: offsets not covered (recovery would replay them). */
  readonly coverage_gaps: Readonly<Record<string, number>>;
  /** Raw coverage claiming offsets raw does not hold: must be 0. */
  readonly raw_overclaimed: number;
}

/**
 * Reads what the demo left on disk with fresh handles — the raw segments and
 * the LevelDB coverage — as a restarted process would, and checks the
 * invariants: raw holds everything, no cursor leads raw, raw's coverage
 * claims only what raw holds; and it counts each sink's coverage gaps.
 */
export async function auditDemo(input: DemoAuditInput): Promise<DemoAudit> {
  const raw = await RawSegmentSink.open({
    id: input.sinks[0] ?? ('raw' as SinkId),
    dir: input.rawDir,
    cluster: input.cluster,
    confirm: { apply: async () => undefined },
    log: () => undefined,
  });
  const coverage = await LevelDbCoverage.open({ location: input.coverageDir, sinks: input.sinks });
  try {
    const n = input.recordsPerPartition;
    let rawMissing = 0;
    let cursorLeads = 0;
    let overclaimed = 0;
    const committed: Record<string, number> = {};
    const gaps: Record<string, number> = {};
    for (const p of input.partitions) {
      const held = new Set<number>();
      for await (const batch of raw.read({ ...p, start: 0, end: n })) {
        for (const r of batch.records) held.add(r.offset);
      }
      rawMissing += n - held.size;
      let prefix = 0;
      while (held.has(prefix)) prefix += 1;
      const cursor = await coverage.loadCursor({ source: input.sourceName, ...p });
      const next = cursor?.nextOffset ?? 0;
      committed[`${p.topic}/${p.partition}`] = next;
      if (next > prefix) cursorLeads += 1;
      for (const sink of input.sinks) {
        const key = { sink, topic: p.topic, partition: p.partition };
        const missing = (await coverage.gaps(key, 0, n)).reduce((s, g) => s + g.end - g.start, 0);
        gaps[sink] = (gaps[sink] ?? 0) + missing;
      }
      const rawKey = { sink: raw.descriptor.id, topic: p.topic, partition: p.partition };
      for (const range of (await coverage.covered(rawKey)).ranges()) {
        for (let o = range.start; o < range.end; o++) if (!held.has(o)) overclaimed += 1;
      }
    }
    return {
      raw_missing: rawMissing,
      cursor_leads: cursorLeads,
      committed,
      coverage_gaps: gaps,
      raw_overclaimed: overclaimed,
    };
  } finally {
    await raw.close();
    await coverage.close();
  }
}
