import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { kafkaBrokers, postgresUrl, pulsar } from '@thalweg/test-services';
import { describe, expect, it } from 'vitest';

const CRASH_JS = join(import.meta.dirname, '..', 'dist', 'crash.js');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runHarness(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CRASH_JS, ...args],
      { maxBuffer: 64 * 1024 * 1024, env: process.env },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Runs 20 kills with a random seed (printed) and expects every finding to be zero. */
async function expectNoLoss(source: 'kafka' | 'pulsar'): Promise<void> {
  if (!existsSync(CRASH_JS)) {
    throw new Error(`${CRASH_JS} is missing: the harness runs built; run \`npx tsc -b\` first`);
  }
  const seed = Math.floor(Math.random() * 2 ** 31);
  console.info(
    `crash harness seed ${seed} (repeat: pnpm harness:crash --source ${source} --kills 20 --seed ${seed})`,
  );
  const run = await runHarness(['--source', source, '--kills', '20', '--seed', String(seed)]);
  const lines = run.stdout.trim().split('\n');
  expect(lines, `stdout must be exactly one JSON line; stderr:\n${run.stderr}`).toHaveLength(1);
  const report = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
  const context = `seed ${seed}; harness log:\n${run.stderr}`;
  expect(report, context).toMatchObject({
    harness: 'crash',
    kills: 20,
    seed,
    missing_raw: 0,
    missing_secondary: 0,
    overclaimed_ranges: 0,
    position_leads: 0,
    duplicate_rows: 0,
    id_mismatches: 0,
    raw_conflicts: 0,
    raw_coverage_holes: 0,
  });
  expect(String(report['source']), context).toMatch(new RegExp(`^${source}`));
  expect(report['records'], context).toBeGreaterThan(0);
  expect(run.code, context).toBe(0);
}

describe('the crash harness, against the real services', () => {
  it('loses nothing across 20 SIGKILLs, reading a Kafka consumer group', async () => {
    // Missing services fail here, with the fix in the message, never a skip.
    postgresUrl();
    kafkaBrokers();
    await expectNoLoss('kafka');
  }, 600_000);

  it('loses nothing across 20 SIGKILLs, reading a Pulsar subscription', async () => {
    postgresUrl();
    pulsar();
    await expectNoLoss('pulsar');
  }, 600_000);
});
