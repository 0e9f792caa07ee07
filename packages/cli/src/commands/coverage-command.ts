import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sinkId } from '@thalweg/connector-core';
import { type CoverageStore, type CoveredRange } from '@thalweg/offset-store';
import { LevelDbCoverage } from '@thalweg/offset-store/leveldb';
import { PostgresCoverage } from '@thalweg/offset-store/postgres';
import { coverageReport, type SinkCoverage } from '@thalweg/pipeline';
import { checkRaw, describeSpans, type RawCheck } from '@thalweg/sink-files';
import { rawCoverageFromDisk } from './raw-holes.js';

export const COVERAGE_USAGE = `thalweg coverage (--dir DIR | --leveldb PATH | --postgres URL [--schema S])
                   [--raw-dir PATH] [--verify] [--raw SINK] [--sinks A,B] [--json]

  coverage   per sink and partition: covered ranges, gaps against raw, lag in
             records; for LevelDB also which tier it served as, and as a
             local tier its drift (what it holds that the durable tier has
             not been sent since the last checkpoint). --dir reads the
             demo's layout (DIR/coverage, DIR/raw), where LevelDB is the only
             tier. Raw's line comes from the raw directory (--raw-dir, or
             DIR/raw) when there is one: what its segments hold, its holes
             (missing, truncated or, with --verify, damaged segments, and
             ranges the store recorded that raw no longer holds). Exits 1
             when raw has a hole or damage.
             Defaults: --raw raw, --sinks the demo's zerobus-events.`;

/** `thalweg coverage`: the operator's view of what each sink holds and what recovery would replay. */
export async function coverageCommand(rest: string[]): Promise<number> {
  const { values } = parseArgs({
    args: rest,
    options: {
      dir: { type: 'string' },
      leveldb: { type: 'string' },
      postgres: { type: 'string' },
      schema: { type: 'string' },
      raw: { type: 'string', default: 'raw' },
      'raw-dir': { type: 'string' },
      verify: { type: 'boolean', default: false },
      sinks: { type: 'string', default: 'zerobus-events' },
      json: { type: 'boolean', default: false },
    },
  });
  const raw = sinkId(values.raw);
  const sinks = values.sinks
    .split(',')
    .filter((s) => s !== '')
    .map((s) => sinkId(s));
  const all = [raw, ...sinks];
  const leveldb =
    values.leveldb ?? (values.dir === undefined ? undefined : join(values.dir, 'coverage'));
  if ((leveldb === undefined) === (values.postgres === undefined)) {
    throw new Error('coverage: give exactly one of --dir, --leveldb or --postgres');
  }
  let store: CoverageStore;
  let drift: Drift | null = null;
  if (leveldb !== undefined) {
    const local = await LevelDbCoverage.open({ location: leveldb, sinks: all });
    drift = await localDrift(local);
    store = local;
  } else {
    store = await PostgresCoverage.open({
      pool: values.postgres ?? '',
      sinks: all,
      ...(values.schema === undefined ? {} : { schema: values.schema }),
    });
  }
  const rawDir =
    values['raw-dir'] ?? (values.dir === undefined ? undefined : join(values.dir, 'raw'));
  try {
    let report = await coverageReport(store, raw, sinks);
    let damage: RawCheck['damage'] = [];
    if (rawDir !== undefined) {
      const check = await checkRaw(rawDir, { checksums: values.verify });
      damage = check.damage;
      const fromDisk = rawCoverageFromDisk(
        raw,
        report.find((s) => s.sink === raw),
        check,
      );
      report = report.map((s) => (s.sink === raw ? fromDisk : s));
    }
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ coverage: report, drift, rawDamage: damage })}\n`
        : render(report, drift) + renderDamage(damage),
    );
    const holes = report.some((s) => s.isRaw && s.lagRecords > 0);
    return holes || damage.length > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

interface Drift {
  /** As the last process that wrote it served: the only (durable) tier, or a local tier in front of one. */
  readonly tier: 'durable' | 'local' | null;
  readonly unflushedEntries: number;
  readonly unflushedRanges: number;
  readonly lastCheckpointAt: number | null;
}

async function localDrift(local: LevelDbCoverage): Promise<Drift> {
  const unflushed = await local.unflushed();
  const diagnostics = await local.diagnostics();
  return {
    tier: diagnostics.lastWrittenAs,
    unflushedEntries: diagnostics.unflushedEntries,
    unflushedRanges: unflushed.deltas.reduce((n, d) => n + d.ranges.length, 0),
    lastCheckpointAt: diagnostics.lastCheckpointAt,
  };
}

function render(report: readonly SinkCoverage[], drift: Drift | null): string {
  const lines: string[] = [];
  for (const sink of report) {
    lines.push(
      `${sink.sink}${sink.isRaw ? ' (primary raw)' : ''}: ` +
        `${sink.isRaw ? 'holes' : 'behind raw by'} ${sink.lagRecords} records`,
    );
    for (const p of sink.partitions) {
      lines.push(
        `  ${p.topic}/${p.partition}  covered ${ranges(p.covered)}` +
          (p.gaps.length === 0 ? '' : `  gaps ${ranges(p.gaps)} (${p.lagRecords} records)`),
      );
    }
  }
  if (drift?.tier === 'durable' && drift.unflushedEntries === 0) {
    lines.push('LevelDB is the durable tier (colocated with raw): it keeps no log to checkpoint');
  } else if (drift !== null) {
    lines.push(
      `local tier drift: ${drift.unflushedEntries} log entries (${drift.unflushedRanges} ranges) ` +
        `not yet checkpointed to the durable tier; last checkpoint ` +
        (drift.lastCheckpointAt === null
          ? 'never (by this store)'
          : new Date(drift.lastCheckpointAt).toISOString()),
    );
  }
  return `${lines.join('\n')}\n`;
}

function renderDamage(damage: RawCheck['damage']): string {
  return damage
    .map(
      (d) =>
        `raw damage: ${d.code} ${d.file}${d.position === null ? '' : ` byte ${d.position}`}: ` +
        `${d.reason}${d.spans.length === 0 ? '' : ` (offsets ${describeSpans(d.spans)})`}\n`,
    )
    .join('');
}

function ranges(list: readonly CoveredRange[]): string {
  const shown = list.slice(0, 6).map((r) => `[${r.start},${r.end})`);
  if (list.length > 6) shown.push(`… ${list.length - 6} more`);
  return shown.length === 0 ? 'none' : shown.join(' ');
}
