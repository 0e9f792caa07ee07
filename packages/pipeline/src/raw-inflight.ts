import { partitionKey, type OffsetSpan, type SourcePartition } from '@thalweg/connector-core';

export interface InflightSpan {
  readonly cost: number;
  readonly generation: number;
  readonly records: number;
}

/**
 * The spans submitted to raw and not yet acknowledged, with what each
 * charged the byte budget and the assignment generation it was read in.
 * Raw confirms in submission order, so the oldest entry of a span is the one
 * an acknowledgement belongs to — a span read again after a partition came
 * back (revoked, then re-assigned) is a later entry of the same key.
 */
export class RawInflight {
  private readonly spans = new Map<string, InflightSpan[]>();
  private readonly generations = new Map<string, number>();
  private count = 0;

  generation(partition: SourcePartition): number {
    return this.generations.get(partitionKey(partition)) ?? 0;
  }

  /** A revocation: acknowledgements of spans read before it are dropped, not applied. */
  bump(partition: SourcePartition): void {
    const key = partitionKey(partition);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }

  add(span: OffsetSpan, entry: InflightSpan): void {
    const key = spanKey(span);
    const list = this.spans.get(key);
    if (list === undefined) this.spans.set(key, [entry]);
    else list.push(entry);
    this.count += 1;
  }

  take(span: OffsetSpan): InflightSpan | undefined {
    const key = spanKey(span);
    const list = this.spans.get(key);
    const entry = list?.shift();
    if (list?.length === 0) this.spans.delete(key);
    if (entry !== undefined) this.count -= 1;
    return entry;
  }

  get size(): number {
    return this.count;
  }
}

function spanKey(span: OffsetSpan): string {
  return `${partitionKey(span)}\u0000${span.start}\u0000${span.end}`;
}
