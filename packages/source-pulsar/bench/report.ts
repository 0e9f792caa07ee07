/** Where the benches reach the broker. */
export interface Endpoint {
  readonly wsUrl: string;
  readonly adminUrl: string;
}

/** One JSON object per line on stdout. */
export function line(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(fields)}\n`);
}

export function round(n: number, digits = 0): number {
  return Number(n.toFixed(digits));
}
