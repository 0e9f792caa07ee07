// Runs every vitest project (unit and integration), once on the Node running
// this script and once on each binary listed in THALWEG_EXTRA_NODES (':'
// separated; test-all.sh puts Node 24 LTS there), and ends with the plain
// line `N passed, N failed` over all runs, which the CI recognises: vitest's
// own summary is not one of the formats it reads. Extra arguments go to
// vitest.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
mkdirSync(join(root, '.cache'), { recursive: true });
const nodes = [
  process.execPath,
  ...(process.env.THALWEG_EXTRA_NODES ?? '').split(':').filter((n) => n !== ''),
];

let passed = 0;
let failed = 0;
let skipped = 0;
let status = 0;
for (const [i, node] of nodes.entries()) {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.error(`== tests on Node ${version}`);
  const out = join(root, '.cache', `test-results-${i}.json`);
  rmSync(out, { force: true });
  // The binary's own directory first on PATH: a test that spawns `node` gets the same one.
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  const run = spawnSync(
    node,
    [
      vitest,
      'run',
      '--config',
      'vitest.workspace.ts',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${out}`,
      ...process.argv.slice(2),
    ],
    { cwd: root, stdio: 'inherit', env },
  );
  let report;
  try {
    report = JSON.parse(readFileSync(out, 'utf8'));
  } catch {
    console.log(`${passed} passed, ${failed + 1} failed`);
    console.error(`vitest on Node ${version} wrote no report: it crashed before running the tests`);
    process.exit(run.status || 1);
  }
  const p = report.numPassedTests;
  // Failed tests, plus files that failed with no failed test (a file that
  // could not load, an error outside any test). numFailedTestSuites would
  // count each describe block of a failed test once more.
  const crashed = (report.testResults ?? []).filter(
    (file) =>
      file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed'),
  ).length;
  const f = report.numFailedTests + crashed;
  // Named again here, after vitest's long output: a CI that keeps only the
  // tail of the log still shows which test failed, and why.
  for (const line of failures(report)) console.error(line);
  const s = report.numPendingTests + report.numTodoTests;
  console.error(`Node ${version}: ${p} passed, ${f} failed${s > 0 ? `, ${s} skipped` : ''}`);
  if (p === 0) {
    console.error(`no test ran on Node ${version}`);
    status ||= 1;
  }
  passed += p;
  failed += f;
  skipped += s;
  status ||= run.status ?? 1;
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(status);

/** One line per failed test (file, full name, the message's first line), and per file that failed outside any test. */
function failures(report) {
  const lines = [];
  for (const file of report.testResults ?? []) {
    const where = file.name.startsWith(root) ? file.name.slice(root.length + 1) : file.name;
    const tests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of tests)
      lines.push(`FAILED ${where} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
    if (file.status === 'failed' && tests.length === 0)
      lines.push(`FAILED ${where}: ${firstLine(file.message)}`);
  }
  return lines;
}

function firstLine(text) {
  const line = (text ?? '').split('\n').find((l) => l.trim() !== '') ?? '(no message)';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
