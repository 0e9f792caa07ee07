import type { SinkId } from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { PipelineError } from '../errors.js';

/**
 * LevelDB in `home`, next to raw: the default coverage store. The LevelDB
 * backend is loaded only here, so a topology given another store never
 * needs `classic-level`.
 */
export async function defaultCoverage(
  home: string | undefined,
  sinks: readonly SinkId[],
): Promise<CoverageStore> {
  if (home === undefined) {
    throw new PipelineError(
      'TWG_PIPELINE_TOPOLOGY_INVALID',
      'coverage: none given, and the raw part has no local directory to keep it next to; ' +
        'pass coverage: (sinks) => store',
    );
  }
  let leveldb: typeof import('@thalweg/offset-store/leveldb');
  try {
    leveldb = await import('@thalweg/offset-store/leveldb');
  } catch (error) {
    throw new PipelineError(
      'TWG_PIPELINE_TOPOLOGY_INVALID',
      `coverage: the default store is LevelDB in ${home}, which needs the classic-level ` +
        'package (npm i classic-level), or pass coverage: (sinks) => store',
      error,
    );
  }
  return leveldb.LevelDbCoverage.open({ location: home, sinks });
}
