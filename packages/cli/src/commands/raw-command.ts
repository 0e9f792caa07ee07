import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  MANIFEST_FILE,
  checkRaw,
  describeSpans,
  repairRaw,
  type RawCheck,
} from '@thalweg/sink-files';

export const RAW_USAGE = `thalweg raw verify --dir DIR [--json]
  thalweg raw repair --dir DIR [--json]

  raw verify  reads every segment of the raw directory DIR (or DIR/raw) and
              checks every byte against its checksum and the manifest:
              damaged, missing and truncated segments by file, byte and
              offset range, and the holes they leave. Exits 1 on any.
  raw repair  (no pipeline running) drops damaged and missing segments from
              raw's manifest, moves the damaged files to DIR/damaged, and
              prints the ranges raw no longer holds: re-read them from the
              source: move its position back to the first offset of each
              (\`thalweg cursor rewind\` for a store-managed source; for a
              Kafka consumer group, reset it with the Kafka tools).`;

/** `thalweg raw …`: check raw's integrity, and the way out of a hole. */
export async function rawCommand(rest: string[]): Promise<number> {
  const [sub, ...args] = rest;
  if (sub === 'verify') return verify(args);
  if (sub === 'repair') return repair(args);
  throw new Error(`raw: unknown subcommand ${JSON.stringify(sub ?? '')} (verify, repair)`);
}

/** DIR itself when it holds a manifest, else the demo layout's DIR/raw. */
function rawDirOf(dir: string | undefined): string {
  if (dir === undefined) throw new Error('raw: --dir is required');
  if (!existsSync(join(dir, MANIFEST_FILE)) && existsSync(join(dir, 'raw', MANIFEST_FILE))) {
    return join(dir, 'raw');
  }
  return dir;
}

async function verify(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { dir: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const started = performance.now();
  const check = await checkRaw(rawDirOf(values.dir), { checksums: true });
  const ms = performance.now() - started;
  const holes = check.partitions.some((p) => p.holes.length > 0);
  process.stdout.write(values.json ? `${JSON.stringify(check)}\n` : renderCheck(check, ms));
  return check.damage.length > 0 || holes ? 1 : 0;
}

function renderCheck(check: RawCheck, ms: number): string {
  const lines = [
    `raw ${check.dir}: ${check.segments} segments, ${(check.bytes / 1e6).toFixed(1)} MB ` +
      `verified in ${ms.toFixed(0)} ms; ${check.damage.length} damaged`,
  ];
  for (const d of check.damage) {
    lines.push(
      `  ${d.code} ${d.file}${d.position === null ? '' : ` byte ${d.position}`}: ${d.reason}` +
        (d.spans.length === 0 ? '' : ` (offsets ${describeSpans(d.spans)})`),
    );
  }
  for (const p of check.partitions) {
    const held = p.held.map((r) => `[${r.start},${r.end})`).join(' ') || 'nothing';
    const holes = p.holes.map((r) => `[${r.start},${r.end})`).join(' ');
    lines.push(
      `  ${p.partition.topic}/${p.partition.partition}  holds ${held}` +
        (holes === '' ? '' : `  HOLES ${holes}`),
    );
  }
  return `${lines.join('\n')}\n`;
}

async function repair(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { dir: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const result = await repairRaw(rawDirOf(values.dir));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else if (result.dropped.length === 0) {
    process.stdout.write('raw repair: nothing damaged or missing; raw is unchanged\n');
  } else {
    process.stdout.write(
      `raw repair: dropped ${describeSpans(result.dropped)} from raw's manifest` +
        (result.movedAside.length === 0
          ? ''
          : `; moved ${result.movedAside.join(', ')} to damaged/`) +
        '.\nRe-read those ranges from the source: move its position back to the first offset of ' +
        'each (`thalweg cursor rewind` for a store-managed source; for a Kafka consumer group, ' +
        'reset it with the Kafka tools), then start the pipeline.\n',
    );
  }
  return 0;
}
