import type { Labels, MetricFamily, Sample } from './metric-family.js';

/** The content type of the Prometheus text exposition format, version 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Writes metric families in the Prometheus text exposition format: a HELP
 * and a TYPE line per family with samples, then one line per sample (a
 * histogram as its cumulative `_bucket` lines with `le`, then `_sum` and
 * `_count`). Families without samples are left out.
 */
export function prometheusText(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const { def, samples } of families) {
    if (samples.length === 0) continue;
    lines.push(`# HELP ${def.name} ${escapeHelp(def.help)}`);
    lines.push(`# TYPE ${def.name} ${def.kind}`);
    for (const sample of samples) writeSample(lines, def.name, sample);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function writeSample(lines: string[], name: string, sample: Sample): void {
  if ('value' in sample) {
    lines.push(`${name}${labelSet(sample.labels)} ${formatValue(sample.value)}`);
    return;
  }
  const h = sample.histogram;
  for (const b of h.buckets) {
    const le = b.le === Number.POSITIVE_INFINITY ? '+Inf' : formatValue(b.le);
    lines.push(`${name}_bucket${labelSet({ ...sample.labels, le })} ${formatValue(b.count)}`);
  }
  lines.push(`${name}_sum${labelSet(sample.labels)} ${formatValue(h.sum)}`);
  lines.push(`${name}_count${labelSet(sample.labels)} ${formatValue(h.count)}`);
}

function labelSet(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
