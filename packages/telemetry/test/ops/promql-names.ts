import { METRIC_DEFS, type MetricDef } from '../../src/metric-catalog.js';

/**
 * Checks the metric names and label names a PromQL expression (of the
 * shipped alert rules or dashboard) uses against the metric catalog, so a
 * renamed metric or label cannot leave them querying nothing. Not a PromQL
 * parser: it reads the few shapes the shipped files are written in, and
 * refuses the ones it cannot check (a postfix `sum(...) by (...)`).
 */

/** Labels Prometheus puts on every scraped series, whatever the exposition says. */
export const TARGET_LABELS: readonly string[] = ['job', 'instance'];

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;
const NAME = /\bthalweg_[a-z0-9_]+\b/g;

/** The catalog metric a series name belongs to (a histogram's `_bucket`, `_sum` and `_count` included). */
export function metricOf(
  series: string,
  catalog: readonly MetricDef[] = METRIC_DEFS,
): MetricDef | undefined {
  const exact = catalog.find((m) => m.name === series);
  if (exact !== undefined) return exact;
  for (const suffix of HISTOGRAM_SUFFIXES) {
    if (!series.endsWith(suffix)) continue;
    const base = catalog.find((m) => m.name === series.slice(0, -suffix.length));
    if (base?.kind === 'histogram') return base;
  }
  return undefined;
}

/** The labels a series of this name may carry when scraped. */
export function labelsOf(
  series: string,
  catalog: readonly MetricDef[] = METRIC_DEFS,
): readonly string[] | undefined {
  const m = metricOf(series, catalog);
  if (m === undefined) return undefined;
  return [...m.labels, ...TARGET_LABELS, ...(series.endsWith('_bucket') ? ['le'] : [])];
}

/** Every `thalweg_*` name in a text (an expression, or the prose of an annotation). */
export function seriesNames(text: string): string[] {
  return [...new Set(text.match(NAME) ?? [])];
}

/** Names in `text` that are not catalog metrics (nor a histogram's series). */
export function unknownNames(text: string, catalog: readonly MetricDef[] = METRIC_DEFS): string[] {
  return seriesNames(text).filter((n) => metricOf(n, catalog) === undefined);
}

/** The balanced parenthesised group that opens at `expr[open]`, without its parentheses. */
function groupAt(expr: string, open: number): string | undefined {
  let depth = 0;
  for (let i = open; i < expr.length; i++) {
    if (expr[i] === '(') depth++;
    if (expr[i] === ')') depth--;
    if (depth === 0) return expr.slice(open + 1, i);
  }
  return undefined;
}

function splitLabels(list: string): string[] {
  return list
    .split(',')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/**
 * What is wrong with the names in one expression: unknown metrics, label
 * matchers on labels the metric lacks, and `by`/`without`/`on`/`ignoring`
 * labels that some metric in the clause's scope lacks. Empty when it is sound.
 */
export function exprProblems(expr: string, catalog: readonly MetricDef[] = METRIC_DEFS): string[] {
  const problems: string[] = [];
  for (const name of unknownNames(expr, catalog)) problems.push(`unknown metric ${name}`);

  for (const m of expr.matchAll(/\b(thalweg_[a-z0-9_]+)\s*\{([^}]*)\}/g)) {
    const [, series = '', matchers = ''] = m;
    const allowed = labelsOf(series, catalog);
    if (allowed === undefined) continue;
    for (const [, label = ''] of matchers.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) {
      if (!allowed.includes(label)) problems.push(`${series} has no label ${label} to match on`);
    }
  }

  for (const m of expr.matchAll(/\b(by|without|on|ignoring)\s*\(([^)]*)\)\s*/g)) {
    const [clause = '', keyword = '', list = ''] = m;
    let scope: string;
    if (keyword === 'on' || keyword === 'ignoring') {
      scope = expr;
    } else {
      const after = m.index + clause.length;
      const group = expr[after] === '(' ? groupAt(expr, after) : undefined;
      if (group === undefined) {
        problems.push(`write "${keyword} (${list})" before the expression it aggregates`);
        continue;
      }
      scope = group;
    }
    const names = seriesNames(scope);
    if (names.length === 0) problems.push(`"${keyword} (${list})" aggregates no thalweg metric`);
    for (const label of splitLabels(list)) {
      for (const series of names) {
        const allowed = labelsOf(series, catalog);
        if (allowed !== undefined && !allowed.includes(label)) {
          problems.push(`${keyword} (${list}): ${series} has no label ${label}`);
        }
      }
    }
  }
  return problems;
}

/** The labels every series of an expression carries (before any aggregation), `le` aside. */
export function commonLabels(expr: string, catalog: readonly MetricDef[] = METRIC_DEFS): string[] {
  const sets = seriesNames(expr).map((n) => labelsOf(n, catalog) ?? []);
  const [first = [], ...rest] = sets;
  return first.filter((l) => l !== 'le' && rest.every((s) => s.includes(l)));
}
