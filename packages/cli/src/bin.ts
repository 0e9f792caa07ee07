#!/usr/bin/env node
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runDemo } from './demo/run-demo.js';

const USAGE = `usage: thalweg demo [--records N] [--partitions P] [--batch B] [--payload BYTES] [--dir DIR]

  demo   generated source -> durable raw segments on local disk; the source
         cursor is stored only after raw's durable acknowledgement, and an
         audit reads raw back at the end. Needs no service.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== 'demo') {
    process.stderr.write(`${USAGE}\n`);
    return command === undefined || command === '--help' ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      records: { type: 'string', default: '20000' },
      partitions: { type: 'string', default: '4' },
      batch: { type: 'string', default: '500' },
      payload: { type: 'string', default: '200' },
      dir: { type: 'string' },
    },
  });
  const number = (name: string, v: string) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new Error(`--${name}: ${v} is not a positive integer`);
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
      progress: (line) => process.stderr.write(`thalweg demo: ${line}\n`),
    });
    process.stdout.write(
      [
        `records in:      ${summary.records_in}`,
        `raw durable:     ${summary.raw_durable} (missing ${summary.raw_missing})`,
        `committed:       ${Object.entries(summary.committed)
          .map(([p, n]) => `${p}@${n}`)
          .join(' ')}`,
        `batches/bursts:  ${summary.batches}/${summary.bursts} (coalesce mean ${summary.coalesce_mean})`,
        `throughput:      ${summary.records_per_s} records/s in ${summary.elapsed_ms} ms`,
        JSON.stringify({ demo: 'seam', ...summary }),
        '',
      ].join('\n'),
    );
    return summary.raw_missing === 0 ? 0 : 1;
  } finally {
    if (values.dir === undefined) await rm(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`thalweg: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
