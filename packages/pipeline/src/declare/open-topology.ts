import {
  DEFAULT_MEMORY_LIMIT_BYTES,
  monotonicClock,
  runDerivation,
  sinkId,
  type HealthReport,
  type OpenedRaw,
  type OpenedSecondary,
  type PartContext,
  type PartStats,
  type RawPart,
  type SinkId,
  type SourcePartition,
} from '@thalweg/connector-core';
import type { CoverageStore } from '@thalweg/offset-store';
import { PipelineError } from '../errors.js';
import { Pipeline } from '../pipeline.js';
import type { PartitionLag, SinkLane } from '../sink-lanes.js';
import type { RecoveryBacklog } from '../recovery/backlog-meter.js';
import { secondary, type SecondarySpec } from '../topology.js';
import { defaultCoverage } from './default-coverage.js';
import type { SecondaryParts, TopologyDeclaration, TopologyStats } from './topology-declaration.js';

/**
 * Opens a declared topology (ADR 0029): the source first (its cluster goes
 * to every sink), then the coverage store for the declared sink ids, then
 * the pipeline, which opens raw and each secondary with its context. Nothing
 * is read until `run`. A failed open closes what it opened.
 */
export async function openTopology<R extends RawPart, S extends SecondaryParts>(
  declaration: TopologyDeclaration<R, S>,
): Promise<Topology<R, S>> {
  refuseLaneConfig(declaration);
  const info = declaration.log ?? ((line: string) => console.info(line));
  const context: PartContext = {
    log: { info, debug: declaration.debug ?? (() => undefined) },
    clock: declaration.clock ?? monotonicClock,
    memoryLimitBytes: declaredMemoryLimit(declaration.config?.memoryLimitBytes),
  };
  const rawId = idOf(declaration.raw.id ?? 'raw', 'raw.id');
  const secondaries = Object.entries(declaration.secondaries ?? {}).map(
    ([key, part]) => [idOf(key, `secondaries["${key}"]`), part] as const,
  );
  const source = await declaration.source.open(context);
  let coverage: CoverageStore;
  try {
    const sinks = [rawId, ...secondaries.map(([id]) => id)];
    coverage = await (declaration.coverage?.(sinks) ??
      defaultCoverage(declaration.raw.coverageHome, sinks));
  } catch (error) {
    await source.close().catch(() => undefined);
    throw error;
  }
  const opened = new OpenedParts();
  const cluster = source.cluster;
  const specs: SecondarySpec<unknown>[] = secondaries.map(([id, part]) =>
    secondary<unknown>({
      open: async (confirm) => {
        const parts = await part.open({ ...context, id, cluster, confirm });
        opened.secondaries.set(id, parts);
        return parts.sink;
      },
      derive: (batch) => runDerivation(opened.secondary(id).derive, cluster, batch),
    }),
  );
  try {
    const pipeline = await Pipeline.open({
      source,
      coverage,
      ...(declaration.sourceName === undefined ? {} : { sourceName: declaration.sourceName }),
      ...(declaration.leases === undefined ? {} : { leases: declaration.leases }),
      ...(declaration.coordination === undefined ? {} : { coordination: declaration.coordination }),
      ...(declaration.quarantine === undefined ? {} : { quarantine: declaration.quarantine }),
      ...(declaration.clock === undefined ? {} : { clock: declaration.clock }),
      ...(declaration.scheduler === undefined ? {} : { scheduler: declaration.scheduler }),
      ...(declaration.memoryUsage === undefined ? {} : { memoryUsage: declaration.memoryUsage }),
      log: info,
      ...(declaration.debug === undefined ? {} : { debug: declaration.debug }),
      config: {
        ...declaration.config,
        secondaries: Object.fromEntries(secondaries.map(([id, part]) => [id, part.lane ?? {}])),
      },
      primaryRaw: async (confirm) => {
        const raw = await declaration.raw.open({ ...context, id: rawId, cluster, confirm });
        opened.raw = raw;
        return raw.sink;
      },
      secondaries: specs,
    });
    return new Topology(pipeline, opened, secondaries);
  } catch (error) {
    await opened.release(info);
    throw error;
  }
}

/**
 * The memory limit the parts are told: the one declared, else the
 * pipeline's default. A declared value that is not a positive integer is
 * refused with the rest of the configuration when the pipeline opens; the
 * parts get the default until then.
 */
function declaredMemoryLimit(declared: unknown): number {
  return typeof declared === 'number' && Number.isSafeInteger(declared) && declared > 0
    ? declared
    : DEFAULT_MEMORY_LIMIT_BYTES;
}

/** A declared topology, opened: the pipeline, with each part's statistics. */
export class Topology<R extends RawPart, S extends SecondaryParts> {
  /** @internal */
  constructor(
    /** The low-level pipeline the parts were composed into. */
    readonly pipeline: Pipeline,
    private readonly opened: OpenedParts,
    private readonly ids: readonly (readonly [SinkId, unknown])[],
  ) {}

  /** See `Pipeline.run`; the parts' own resources are released once it ends. */
  async run(options: { readonly untilCaughtUp?: boolean } = {}): Promise<TopologyStats<R, S>> {
    try {
      await this.pipeline.run(options);
    } finally {
      await this.opened.release(() => undefined);
    }
    return this.stats();
  }

  /** See `Pipeline.stop`. */
  async stop(): Promise<TopologyStats<R, S>> {
    try {
      await this.pipeline.stop();
    } finally {
      await this.opened.release(() => undefined);
    }
    return this.stats();
  }

  stats(): TopologyStats<R, S> {
    const sinks: Record<string, unknown> = {};
    for (const [id] of this.ids) sinks[id] = this.opened.secondaries.get(id)?.stats() ?? null;
    return {
      ...this.pipeline.stats(),
      rawSink: (this.opened.raw?.stats() ?? null) as PartStats<R> | null,
      sinks: sinks as TopologyStats<R, S>['sinks'],
    };
  }

  health(): HealthReport {
    return this.pipeline.health();
  }

  backlog(): RecoveryBacklog {
    return this.pipeline.backlog();
  }

  committed(partition: SourcePartition): number | null {
    return this.pipeline.committed(partition);
  }

  /** See `Pipeline.lanes`. */
  lanes(): readonly SinkLane[] {
    return this.pipeline.lanes();
  }

  /** See `Pipeline.sourceLag`. */
  sourceLag(): readonly PartitionLag[] {
    return this.pipeline.sourceLag();
  }
}

/** What the parts opened, for their statistics and for what they release after the sinks. */
class OpenedParts {
  raw: OpenedRaw<unknown> | null = null;
  readonly secondaries = new Map<SinkId, OpenedSecondary<unknown, unknown>>();
  private released: Promise<void> | null = null;

  secondary(id: SinkId): OpenedSecondary<unknown, unknown> {
    const parts = this.secondaries.get(id);
    // The pipeline derives only for a lane whose sink opened.
    if (parts === undefined) throw new Error(`secondary ${id}: derived before it opened`);
    return parts;
  }

  release(log: (line: string) => void): Promise<void> {
    this.released ??= Promise.allSettled(
      [...this.secondaries.values()].map((p) => p.release?.() ?? Promise.resolve()),
    ).then((results) => {
      for (const r of results) {
        if (r.status === 'rejected') log(`releasing a part failed: ${String(r.reason)}`);
      }
    });
    return this.released;
  }
}

function idOf(value: string, path: string): SinkId {
  try {
    return sinkId(value);
  } catch (error) {
    throw new PipelineError(
      'TWG_PIPELINE_TOPOLOGY_INVALID',
      `${path}: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
}

/** Lane settings are declared with each part; a second place would let them disagree. */
function refuseLaneConfig(declaration: { readonly config?: object }): void {
  if (declaration.config !== undefined && 'secondaries' in declaration.config) {
    throw new PipelineError(
      'TWG_PIPELINE_TOPOLOGY_INVALID',
      'config.secondaries: declare lane settings with each secondary part (lane: {...}), ' +
        'where its id is declared',
    );
  }
}
