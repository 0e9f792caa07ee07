// Runs every vitest project (unit and integration) and ends with the plain
// line `N passed, N failed` that the CI recognises: vitest's own summary is
// not one of the formats it reads. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const out = join(root, '.cache', 'test-results.json');
mkdirSync(join(root, '.cache'), { recursive: true });
rmSync(out, { force: true });

const run = spawnSync(
  'pnpm',
  [
    'exec',
    'vitest',
    'run',
    '--config',
    'vitest.workspace.ts',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${out}`,
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);

let report;
try {
  report = JSON.parse(readFileSync(out, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  console.error('vitest wrote no report: it crashed before running the tests');
  process.exit(run.status || 1);
}
const passed = report.numPassedTests;
const failed = report.numFailedTests + (report.numFailedTestSuites ?? 0);
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
if (passed === 0) {
  console.error('no test ran');
  process.exit(1);
}
process.exit(run.status ?? 1);
