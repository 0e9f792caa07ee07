import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The ops/ directory of the package, as it ships. */
export const OPS_DIR = join(import.meta.dirname, '../../ops');
export const RULES_FILE = join(OPS_DIR, 'prometheus/thalweg-alerts.yml');
export const RULES_TEST_FILE = join(OPS_DIR, 'prometheus/thalweg-alerts.test.yml');
export const DASHBOARD_FILE = join(OPS_DIR, 'grafana/thalweg-dashboard.json');

export function readOps(file: string): string {
  return readFileSync(file, 'utf8');
}

/** One alerting rule as the shipped file writes it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** The rule's whole text (labels and annotations), for the names its prose uses. */
  readonly body: string;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/**
 * The alerting rules of a Prometheus rules file, read line by line (the
 * package has no YAML parser, and the file has one shape): each `- alert:`
 * item up to the next, with its `expr` inline or as a `>-` / `|` block.
 */
export function alertRules(text: string): AlertRule[] {
  const lines = text.split('\n');
  const rules: AlertRule[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = /^(\s*)- alert:\s*(\S+)\s*$/.exec(lines[i] ?? '');
    if (start === null) continue;
    const ind = (start[1] ?? '').length;
    let end = i + 1;
    while (end < lines.length) {
      const line = lines[end] ?? '';
      if (line.trim() !== '' && !line.trimStart().startsWith('#') && indentOf(line) <= ind) break;
      end++;
    }
    const body = lines.slice(i, end);
    rules.push({ alert: start[2] ?? '', expr: exprOf(body), body: body.join('\n') });
  }
  return rules;
}

function exprOf(body: readonly string[]): string {
  const at = body.findIndex((l) => /^\s*expr:/.test(l));
  if (at < 0) return '';
  const line = body[at] ?? '';
  const value = line.slice(line.indexOf('expr:') + 'expr:'.length).trim();
  if (!/^[>|]-?$/.test(value)) return value.replace(/^(['"])(.*)\1$/, '$2');
  const keyIndent = indentOf(line);
  const block: string[] = [];
  for (const l of body.slice(at + 1)) {
    if (l.trim() !== '' && indentOf(l) <= keyIndent) break;
    block.push(l.trim());
  }
  return block.join(value.startsWith('>') ? ' ' : '\n').trim();
}

/**
 * How many alerts each alert_rule_test case of a promtool test file expects
 * to fire, summed per alert name.
 */
export function expectedFirings(text: string): Map<string, number> {
  const fired = new Map<string, number>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    if (/^\s*- eval_time:/.test(line)) current = undefined;
    const name = /^\s*alertname:\s*(\S+)/.exec(line);
    if (name !== null) {
      current = name[1];
      if (current !== undefined && !fired.has(current)) fired.set(current, 0);
    }
    if (/^\s*- exp_labels:/.test(line) && current !== undefined) {
      fired.set(current, (fired.get(current) ?? 0) + 1);
    }
  }
  return fired;
}

/** The parts of a Grafana dashboard these tests read. */
export interface Dashboard {
  readonly schemaVersion: number;
  readonly templating: { readonly list: readonly DashboardVariable[] };
  readonly panels: readonly Panel[];
}

export interface DashboardVariable {
  readonly type: string;
  readonly name: string;
  readonly query?: string | { readonly query: string };
}

export interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: {
    readonly x: number;
    readonly y: number;
    readonly w: number;
    readonly h: number;
  };
  readonly datasource?: { readonly type?: string; readonly uid?: string };
  readonly targets?: readonly {
    readonly refId?: string;
    readonly expr?: string;
    readonly datasource?: { readonly type?: string; readonly uid?: string };
  }[];
  readonly panels?: readonly Panel[];
}

/** Every panel, those inside a collapsed row included; rows themselves are not panels of data. */
export function dataPanels(dashboard: Dashboard): Panel[] {
  const out: Panel[] = [];
  const walk = (panels: readonly Panel[]): void => {
    for (const p of panels) {
      if (p.type === 'row') walk(p.panels ?? []);
      else out.push(p);
    }
  };
  walk(dashboard.panels);
  return out;
}

export function variableQuery(v: DashboardVariable): string {
  return typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
}
