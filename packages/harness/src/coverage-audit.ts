import { existsSync } from 'node:fs';
import type { SinkId } from '@thalweg/connector-core';
import {
  RangeSet,
  type CoverageKey,
  type CoverageTier,
  type CoveredRange,
} from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import type pg from 'pg';
import { PG, RAW } from './harness-topology.js';
import { ZEROBUS } from './zerobus-topology.js';

/** The ranges one store claims for one destination. */
export interface CoverageView {
  /** Which store: `pipeline-durable`, `pipeline-local` or `sink-transactional`. */
  readonly store: string;
  readonly key: CoverageKey;
  readonly ranges: readonly CoveredRange[];
}

/**
 * Reads every coverage claim there is about the run: the pipeline's durable
 * tier (Postgres), its local tier (the LevelDB next to raw, opened only
 * while no child is alive) and the Postgres sink's own transactional
 * coverage. Read BEFORE the sinks' contents, so that anything committed in
 * between can only add to what the claims are checked against.
 */
export async function readCoverageViews(options: {
  readonly pool: pg.Pool;
  readonly coverageSchema: string;
  readonly sinkSchema: string;
  readonly localDir: string;
  readonly topic: string;
}): Promise<CoverageView[]> {
  const views: CoverageView[] = [];
  const collect = async (store: string, tier: CoverageTier): Promise<void> => {
    try {
      for (const key of await tier.destinations()) {
        if (key.topic !== options.topic) continue;
        views.push({ store, key, ranges: (await tier.covered(key)).ranges() });
      }
    } finally {
      await tier.close();
    }
  };
  const all: SinkId[] = [RAW, PG, ZEROBUS];
  await collect(
    'pipeline-durable',
    await PostgresCoverage.open({
      pool: options.pool,
      schema: options.coverageSchema,
      sinks: all,
    }),
  );
  if (existsSync(options.localDir)) {
    await collect(
      'pipeline-local',
      await LevelDbCoverage.open({ location: options.localDir, sinks: all }),
    );
  }
  await collect(
    'sink-transactional',
    await PostgresCoverage.open({ pool: options.pool, schema: options.sinkSchema, sinks: [PG] }),
  );
  return views;
}

/**
 * The claimed ranges that include an offset their sink does not hold, each
 * named `store:sink/topic/partition:[start,end)`: an over-claim is a span
 * recovery would never replay, i.e. silent loss.
 */
export function overclaimedRanges(
  views: readonly CoverageView[],
  holds: (sink: SinkId, partition: number, offset: number) => boolean,
  /** The offsets a record can be at in [start, end): all of them, unless the source's are sparse. */
  offsetsIn: (partition: number, start: number, end: number) => Iterable<number> = denseOffsets,
): string[] {
  const out: string[] = [];
  for (const view of views) {
    const { sink, topic, partition } = view.key;
    for (const range of view.ranges) {
      for (const offset of offsetsIn(partition, range.start, range.end)) {
        if (holds(sink, partition, offset)) continue;
        out.push(
          `${view.store}:${sink}/${topic}/${partition}:[${range.start},${range.end}) lacks ${offset}`,
        );
        break;
      }
    }
  }
  return out;
}

function* denseOffsets(_partition: number, start: number, end: number): Iterable<number> {
  for (let offset = start; offset < end; offset++) yield offset;
}

/**
 * Offsets raw holds that the source acknowledged (Kafka: below the committed position) that raw's recorded
 * coverage (the pipeline's store, both tiers) lacks, per partition. The
 * source never delivers them again, so only raw itself still says they
 * exist: recovery plans from `ReplayableSink.held`, and every pipeline
 * merges it into the store when it opens (ADR 0012). After a kill this is
 * lag; once a pipeline has opened on raw, none may be left.
 */
export function rawCoverageHoles(
  views: readonly CoverageView[],
  acknowledged: (partition: number, offset: number) => boolean,
  rawHeld: readonly ReadonlyMap<number, unknown>[],
): number[] {
  return rawHeld.map((held, partition) => {
    const ranges = views
      .filter(
        (v) =>
          v.store.startsWith('pipeline-') && v.key.sink === RAW && v.key.partition === partition,
      )
      .flatMap((v) => v.ranges);
    let holes = 0;
    for (const offset of held.keys()) {
      if (!acknowledged(partition, offset)) continue;
      if (!ranges.some((r) => r.start <= offset && offset < r.end)) holes += 1;
    }
    return holes;
  });
}

/**
 * What recovery would replay: offsets in raw's recorded coverage that a
 * secondary's (as the pipeline records them, durable and local tiers)
 * lacks, summed over partitions and secondaries.
 */
export function secondaryBacklog(views: readonly CoverageView[]): number {
  const union = (sink: SinkId, partition: number): RangeSet =>
    RangeSet.of(
      views
        .filter(
          (v) =>
            v.store.startsWith('pipeline-') && v.key.sink === sink && v.key.partition === partition,
        )
        .flatMap((v) => v.ranges),
    );
  const partitions = new Set(views.map((v) => v.key.partition));
  let lag = 0;
  for (const p of partitions) {
    for (const sink of [PG, ZEROBUS]) {
      const secondary = union(sink, p);
      for (const r of union(RAW, p).ranges()) {
        for (const gap of secondary.gaps(r.start, r.end)) lag += gap.end - gap.start;
      }
    }
  }
  return lag;
}
