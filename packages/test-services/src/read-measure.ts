/**
 * What the read benches of the sources measure, one way for all of them: a
 * bare client loop (the baseline) and the source read the same topic in the
 * same run, and both report a `ConsumeMeasure`.
 */
export interface ConsumeMeasure {
  readonly records: number;
  readonly bytes: number;
  /** From opening the reader to the last record: includes joining or subscribing. */
  readonly totalMs: number;
  /** From the first record to the last: the steady read rate. */
  readonly steadyMs: number;
  readonly recordsPerSec: number;
}

/** Counts what a reader took, and when, into a `ConsumeMeasure`. */
export class ReadMeter {
  records = 0;
  bytes = 0;
  private readonly startedAt = performance.now();
  private firstAt = 0;

  /** One delivery of `records` records of `bytes` value bytes in all. */
  took(records: number, bytes: number): void {
    if (this.firstAt === 0) this.firstAt = performance.now();
    this.records += records;
    this.bytes += bytes;
  }

  /** The measure, the read having ended at `endedAt` (now by default). */
  measure(endedAt = performance.now()): ConsumeMeasure {
    const steadyMs = endedAt - this.firstAt;
    return {
      records: this.records,
      bytes: this.bytes,
      totalMs: endedAt - this.startedAt,
      steadyMs,
      recordsPerSec: this.records / (steadyMs / 1000),
    };
  }
}

/**
 * Reads `batches` (a source's) until `records` records came, counting value
 * bytes; `each` runs after each batch (a commit). The loop the sources'
 * benches measure against their bare client loops.
 */
export async function meterBatches<
  B extends { readonly records: readonly { readonly value: Uint8Array }[] },
>(
  batches: AsyncIterable<B>,
  records: number,
  each: (batch: B) => Promise<void> = () => Promise.resolve(),
): Promise<ConsumeMeasure> {
  const meter = new ReadMeter();
  for await (const batch of batches) {
    let bytes = 0;
    for (const r of batch.records) bytes += r.value.byteLength;
    meter.took(batch.records.length, bytes);
    await each(batch);
    if (meter.records >= records) break;
  }
  return meter.measure();
}

/** One JSON object per line on stdout: the benches' output. */
export function benchLine(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(fields)}\n`);
}

export function round(n: number, digits = 0): number {
  return Number(n.toFixed(digits));
}

/** The common fields of one read run's line. */
export function readFields(bench: string, reader: string, m: ConsumeMeasure, run: number) {
  return {
    bench,
    reader,
    run,
    records: m.records,
    value_mb: round(m.bytes / 1e6, 1),
    total_ms: round(m.totalMs),
    steady_ms: round(m.steadyMs),
    records_per_s: round(m.recordsPerSec),
  };
}
