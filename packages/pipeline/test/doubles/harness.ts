import type { Coordination } from '@thalweg/coordination';
import type { Clock, Scheduler, Source } from '@thalweg/connector-core';
import { InMemoryCoverage, type CoverageStore, type LeaseStore } from '@thalweg/offset-store';
import { sinkId } from '@thalweg/connector-core';
import {
  Pipeline,
  secondary,
  type DqAuditStore,
  type PipelineConfigInput,
  type QuarantineWriter,
  type SecondarySpec,
} from '../../src/index.js';
import { jsonRows, MemoryRawSink, MemorySecondary, type MemoryRow } from './memory-sinks.js';

export interface Built {
  readonly pipeline: Pipeline;
  readonly raw: MemoryRawSink;
  readonly secondaries: MemorySecondary[];
  readonly coverage: CoverageStore;
  readonly log: string[];
}

export interface BuildOptions {
  readonly secondaries?: number;
  readonly config?: PipelineConfigInput;
  readonly coverage?: CoverageStore;
  readonly raw?: (raw: MemoryRawSink) => void;
  readonly secondary?: (sink: MemorySecondary, i: number) => void;
  readonly memoryUsage?: () => number;
  readonly extraSecondaries?: readonly SecondarySpec<unknown>[];
  readonly quarantineWriter?: QuarantineWriter;
  readonly dqAudit?: DqAuditStore;
  /** Raw's records and each secondary's rows, shared with an earlier run. */
  readonly rawHeld?: Map<string, Map<number, Uint8Array>>;
  readonly tables?: Map<string, MemoryRow>[];
  readonly leases?: LeaseStore;
  /** Runs the flow cycle (and recovery's pauses): a ManualClock lets the test run each one. */
  readonly scheduler?: Scheduler;
  /** The pipeline's clock (a ManualClock lets the test move time for it alone). */
  readonly clock?: Clock;
  /** Content dedup's seen-set lives here (`config.dedup`). */
  readonly coordination?: Coordination;
}

export async function build(source: Source, options: BuildOptions = {}): Promise<Built> {
  const log: string[] = [];
  const ids = Array.from({ length: options.secondaries ?? 0 }, (_, i) => `sec${i}`);
  const coverage = keepOpen(
    options.coverage ??
      new InMemoryCoverage({ sinks: [sinkId('raw'), ...ids.map((id) => sinkId(id))] }),
  );
  let raw: MemoryRawSink | undefined;
  const secondaries: MemorySecondary[] = [];
  const pipeline = await Pipeline.open({
    source,
    coverage,
    config: { evaluateEveryMs: 5, ...options.config },
    log: (line) => log.push(line),
    ...(options.memoryUsage === undefined ? {} : { memoryUsage: options.memoryUsage }),
    ...(options.quarantineWriter === undefined ? {} : { quarantine: options.quarantineWriter }),
    ...(options.leases === undefined ? {} : { leases: options.leases }),
    ...(options.dqAudit === undefined ? {} : { dqAudit: options.dqAudit }),
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.coordination === undefined ? {} : { coordination: options.coordination }),
    primaryRaw: (confirm) => {
      raw = new MemoryRawSink(confirm, log, 'raw', options.rawHeld);
      options.raw?.(raw);
      return raw;
    },
    secondaries: [
      ...ids.map((id, i) =>
        secondary({
          open: (confirm) => {
            const sink = new MemorySecondary(
              confirm,
              id,
              { kind: 'server-ack' },
              log,
              options.tables?.[i],
            );
            options.secondary?.(sink, i);
            secondaries.push(sink);
            return sink;
          },
          derive: jsonRows,
        }),
      ),
      ...(options.extraSecondaries ?? []),
    ],
  });
  if (raw === undefined) throw new Error('raw was not opened');
  return { pipeline, raw, secondaries, coverage, log };
}

/** The same store, with `close` a no-op: lets a test read it after a pipeline shut down. */
export function keepOpen<S extends CoverageStore>(store: S): S {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'close') return async () => undefined;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
