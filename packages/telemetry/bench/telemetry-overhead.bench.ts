import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_NAMES, EventChannel } from '@thalweg/connector-core';
import { openTopology } from '@thalweg/pipeline';
import { rawSegments } from '@thalweg/sink-files';
import { fakeZerobus, fromJson, zerobus } from '@thalweg/sink-zerobus';
import { files } from '@thalweg/source-files';
import { BatchSchema, column } from '@thalweg/stream-arrow';
import { collectMetrics, prometheusText } from '@thalweg/telemetry';

/**
 * What telemetry costs a running topology (ndjson files -> raw segments ->
 * a fake Zerobus secondary), measured against the same topology in the
 * same run, rounds interleaved so drift in the machine's load hits both:
 *
 * - without: nothing reads the metrics, no channel has a subscriber;
 * - with metrics: the Prometheus exposition is built every 100 ms (ten
 *   times a 1 s scrape), channels still without subscribers — what a
 *   scraped deployment that does not trace pays;
 * - with subscribers: as with metrics, and a listener on every channel
 *   (what tracing's subscription itself costs, before any exporter).
 */
const RECORDS = Number(process.env['TWG_BENCH_RECORDS'] ?? 300_000);
const ROUNDS = Number(process.env['TWG_BENCH_ROUNDS'] ?? 7);
const SCRAPE_EVERY_MS = 100;

const schema = BatchSchema.define({
  fields: [
    { name: 'id', type: column.int64, nullable: false },
    { name: 'note', type: column.utf8, nullable: false },
  ],
  recordId: 'hex',
});

type Mode = 'without' | 'metrics' | 'subscribers';

/** One run: records per second of wall time, CPU microseconds per record (all threads), scrape share. */
interface RunResult {
  readonly recS: number;
  readonly cpuUsPerRecord: number;
  readonly scrapeShare: number;
}

async function run(input: string, mode: Mode): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'twg-bench-telemetry-'));
  const unsubscribe: (() => void)[] = [];
  let seen = 0;
  if (mode === 'subscribers') {
    for (const name of EVENT_NAMES) {
      unsubscribe.push(new EventChannel(name).subscribe(() => (seen += 1)));
    }
  }
  try {
    const job = await openTopology({
      source: files({
        format: 'ndjson',
        files: { kind: 'directory', directory: input, extension: '.ndjson' },
      }),
      raw: rawSegments({ dir: join(dir, 'raw') }),
      secondaries: {
        zb: zerobus({
          table: 'main.bench.events',
          schema,
          transport: fakeZerobus({ ackLatencyMs: 2 }),
          row: fromJson((o: { id: number; note: string }) => ({ id: BigInt(o.id), note: o.note })),
        }),
      },
      log: () => undefined,
    });
    let bytes = 0;
    let scrapeMs = 0;
    const scrape =
      mode === 'without'
        ? null
        : setInterval(() => {
            const t = performance.now();
            bytes += prometheusText(collectMetrics(job)).length;
            scrapeMs += performance.now() - t;
          }, SCRAPE_EVERY_MS);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const stats = await job.run();
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - started) / 1000;
    if (scrape !== null) clearInterval(scrape);
    if (stats.raw.durableRecords !== RECORDS) {
      throw new Error(`raw holds ${String(stats.raw.durableRecords)} of ${String(RECORDS)}`);
    }
    if (mode !== 'without' && bytes === 0 && seconds * 1000 > SCRAPE_EVERY_MS * 2) {
      throw new Error('the scrape never ran');
    }
    if (mode === 'subscribers' && seen === 0) throw new Error('no event reached a subscriber');
    return {
      recS: RECORDS / seconds,
      cpuUsPerRecord: (used.user + used.system) / RECORDS,
      scrapeShare: scrapeMs / (seconds * 1000),
    };
  } finally {
    for (const u of unsubscribe) u();
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

const input = mkdtempSync(join(tmpdir(), 'twg-bench-telemetry-in-'));
mkdirSync(input, { recursive: true });
const lines: string[] = [];
for (let i = 0; i < RECORDS; i++)
  lines.push(`{"id":${String(i)},"note":"record ${String(i)} of the bench"}`);
writeFileSync(join(input, 'events.ndjson'), `${lines.join('\n')}\n`);

try {
  await run(input, 'without'); // warm-up: JIT and the page cache, not counted
  const results: Record<Mode, RunResult[]> = { without: [], metrics: [], subscribers: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order: Mode[] =
      r % 2 === 0 ? ['without', 'metrics', 'subscribers'] : ['subscribers', 'metrics', 'without'];
    for (const mode of order) results[mode].push(await run(input, mode));
  }
  const m = (mode: Mode, key: keyof RunResult): number => median(results[mode].map((x) => x[key]));
  const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
  process.stdout.write(
    `${JSON.stringify({
      bench: 'telemetry-overhead',
      records: RECORDS,
      rounds: ROUNDS,
      scrape_every_ms: SCRAPE_EVERY_MS,
      with_metrics_rec_s: Math.round(m('metrics', 'recS')),
      without_rec_s: Math.round(m('without', 'recS')),
      ratio: round(m('metrics', 'recS') / m('without', 'recS'), 3),
      // CPU per record over every thread: less at the mercy of scheduling than wall time.
      cpu_us_per_record_with: round(m('metrics', 'cpuUsPerRecord'), 2),
      cpu_us_per_record_without: round(m('without', 'cpuUsPerRecord'), 2),
      cpu_ratio: round(m('without', 'cpuUsPerRecord') / m('metrics', 'cpuUsPerRecord'), 3),
      // The main thread's time spent building the exposition, over the run's.
      scrape_share: round(m('metrics', 'scrapeShare'), 4),
      with_subscribers_rec_s: Math.round(m('subscribers', 'recS')),
      subscribers_ratio: round(m('subscribers', 'recS') / m('without', 'recS'), 3),
      subscribers_cpu_ratio: round(
        m('without', 'cpuUsPerRecord') / m('subscribers', 'cpuUsPerRecord'),
        3,
      ),
    })}\n`,
  );
} finally {
  rmSync(input, { recursive: true, force: true });
}
