/** How a metric's value behaves, in the terms Prometheus and OpenTelemetry share. */
export type MetricKind = 'counter' | 'gauge' | 'histogram';

/** One named fact: the one place its name, meaning and labels are written. */
export interface MetricDef {
  readonly name: string;
  readonly kind: MetricKind;
  readonly help: string;
  /** UCUM-style unit for OpenTelemetry (`s`, `By`, `1`, `{batch}`). */
  readonly unit: string;
  readonly labels: readonly string[];
}

export function def<const L extends readonly string[]>(
  name: string,
  kind: MetricKind,
  unit: string,
  labels: L,
  help: string,
): MetricDef & { readonly labels: L } {
  return { name, kind, unit, labels, help };
}
