import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runDemo, type DemoSummary } from '../demo/run-demo.js';

export const DEMO_USAGE = `thalweg demo [--records N] [--partitions P] [--batch B] [--payload BYTES]
                   [--ack-ms MS] [--fail-at-wait N] [--malformed-every N] [--dir DIR]
                   [--port PORT [--host HOST]]

  demo   a generated, replayable source -> durable Arrow IPC raw segments on
         local disk -> a Databricks Zerobus secondary over the fake transport
         (acknowledgement latency, one dead stream mid-run), coverage in
         LevelDB. Source positions are stored only after raw's durable
         acknowledgement. Ends with an audit that reads raw and the coverage
         back from disk. Needs no service. With --port, serves /metrics
         (Prometheus), /live and /ready on HOST (default 127.0.0.1) while it
         runs and prints the URL; --port 0 takes a free port.`;

/** `thalweg demo`: runs the main job and prints its summary; non-zero when the audit fails. */
export async function demoCommand(rest: string[]): Promise<number> {
  const { values } = parseArgs({
    args: rest,
    options: {
      records: { type: 'string', default: '200000' },
      partitions: { type: 'string', default: '4' },
      batch: { type: 'string', default: '1000' },
      payload: { type: 'string', default: '200' },
      'ack-ms': { type: 'string', default: '20' },
      'fail-at-wait': { type: 'string', default: '25' },
      'malformed-every': { type: 'string', default: '5000' },
      dir: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  const number = (name: string, v: string, min = 1) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min) {
      throw new Error(`--${name}: ${v} is not an integer >= ${min}`);
    }
    return n;
  };
  const partitions = number('partitions', values.partitions);
  const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'thalweg-demo-')));
  try {
    const summary = await runDemo({
      dir,
      partitions,
      recordsPerPartition: Math.ceil(number('records', values.records) / partitions),
      batchSize: number('batch', values.batch),
      payloadBytes: number('payload', values.payload),
      ackLatencyMs: number('ack-ms', values['ack-ms'], 0),
      failAtWait: number('fail-at-wait', values['fail-at-wait'], 0),
      malformedEvery: number('malformed-every', values['malformed-every'], 0),
      progress: (line) => process.stderr.write(`thalweg demo: ${line}\n`),
      ...(values.port === undefined
        ? {}
        : { telemetry: { port: number('port', values.port, 0), host: values.host } }),
    });
    process.stdout.write(render(summary));
    const sound =
      summary.raw_missing === 0 && summary.cursor_leads === 0 && summary.raw_overclaimed === 0;
    return sound ? 0 : 1;
  } finally {
    if (values.dir === undefined) await rm(dir, { recursive: true, force: true });
  }
}

function render(s: DemoSummary): string {
  const gaps = Object.entries(s.coverage_gaps)
    .map(([sink, n]) => `${sink}=${n}`)
    .join(' ');
  const quarantined = Object.entries(s.quarantined)
    .map(([reason, n]) => `${reason}=${n}`)
    .join(' ');
  return [
    `records in:         ${s.records_in}`,
    `raw durable:        ${s.raw_durable} (read back: missing ${s.raw_missing}, over-claimed ${s.raw_overclaimed})`,
    `zerobus delivered:  ${s.zerobus_delivered} live (stream rebuilds ${s.zerobus_rebuilds}; shed while rebuilding ${s.zerobus_shed})`,
    `recovery replayed:  ${s.recovered} records from raw into zerobus-events`,
    `quarantined:        ${quarantined || 'none'}`,
    `coverage gaps:      ${gaps} (after recovery)`,
    `committed:          ${Object.entries(s.committed)
      .map(([p, n]) => `${p}@${n}`)
      .join(' ')} (cursors leading raw: ${s.cursor_leads})`,
    `throughput:         ${s.records_per_s} records/s in ${s.elapsed_ms} ms`,
    `coalescing:         raw ${s.raw_coalesce.toFixed(1)} batches/segment, zerobus p50 ${s.zerobus_coalesce_p50 ?? '-'} batches/ack`,
    JSON.stringify({ demo: 'pipeline', ...s }),
    '',
  ].join('\n');
}
