import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prometheus } from '@thalweg/test-services';
import {
  dataPanels,
  DASHBOARD_FILE,
  readOps,
  RULES_FILE,
  RULES_TEST_FILE,
  type Dashboard,
} from './ops-files.js';

interface Run {
  readonly code: number;
  readonly output: string;
}

/** Runs promtool; its exit code and everything it printed (shown when an expectation fails). */
function promtool(args: readonly string[], cwd: string): Promise<Run> {
  const { promtool: bin } = prometheus();
  return new Promise((resolve, reject) => {
    execFile(bin, args, { cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      const output = `$ promtool ${args.join(' ')}\n${stdout}${stderr}`;
      if (err === null) resolve({ code: 0, output });
      else if (typeof err.code === 'number') resolve({ code: err.code, output });
      else reject(new Error(`promtool did not run: ${err.message}\n${output}`));
    });
  });
}

describe('promtool on the shipped alert rules', () => {
  const dir = dirname(RULES_FILE);
  const scratch: string[] = [];

  afterAll(async () => {
    await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('checks the rules file', async () => {
    const run = await promtool(['check', 'rules', basename(RULES_FILE)], dir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/SUCCESS: 7 rules found/);
  });

  it('passes the rules unit test, in which each alert fires', async () => {
    const run = await promtool(['test', 'rules', basename(RULES_TEST_FILE)], dir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/SUCCESS/);
  });

  // The unit test must be able to fail: with the textbook `< 2` (which the
  // interpolated median of a lane coalescing 2 per wait meets) or a lower
  // saturation threshold, promtool reports the cases that then fire.
  it.each([
    ['coalesce p50 compared with < 2', /_bucket\[5m\]\)\) <= 1/, '_bucket[5m])) < 2', 'zb'],
    ['saturation at 0.8', /saturation_ratio >= 0\.9/, 'saturation_ratio >= 0.8', 'raw'],
  ])('fails the rules unit test when the rule reads %s', async (_, from, to, sink) => {
    const work = await mkdtemp(join(tmpdir(), 'twg-rules-'));
    scratch.push(work);
    const rules = await readFile(RULES_FILE, 'utf8');
    expect(rules).toMatch(from);
    await writeFile(join(work, basename(RULES_FILE)), rules.replace(from, to));
    await copyFile(RULES_TEST_FILE, join(work, basename(RULES_TEST_FILE)));
    const run = await promtool(['test', 'rules', basename(RULES_TEST_FILE)], work);
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toMatch(/FAILED/);
    expect(run.output).toContain(`sink="${sink}"`);
  });
});

describe('the shipped dashboard against a real Prometheus', () => {
  const dashboard = JSON.parse(readOps(DASHBOARD_FILE)) as Dashboard;
  const exprs = dataPanels(dashboard).flatMap((p) =>
    (p.targets ?? []).map((t) => [p.title, t.expr ?? ''] as const),
  );

  // Grafana substitutes its variables before the query is sent; here the
  // "All" values and a fixed rate interval stand in for them.
  const substituted = (expr: string): string =>
    expr
      .replaceAll('$__rate_interval', '1m')
      .replaceAll('$sink', '.*')
      .replaceAll('$instance', '.*');

  it.each(exprs)('%s: Prometheus accepts %s', async (_, expr) => {
    const { url } = prometheus();
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(substituted(expr))}`);
    const body = await res.text();
    expect(res.status, body).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ status: 'success' });
  });
});
