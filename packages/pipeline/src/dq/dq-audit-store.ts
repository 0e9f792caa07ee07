import type { OffsetSpan } from '@thalweg/connector-core';
import { PipelineError } from '../errors.js';
import type { DqCheckCounts } from '../topology.js';

/**
 * One window of the dq-audit trail: what one check of one secondary found
 * over one span the secondary was handed (live or in recovery).
 */
export interface DqAuditEntry {
  readonly sink: string;
  readonly span: OffsetSpan;
  readonly check: string;
  readonly passed: number;
  readonly failed: number;
}

export interface DqAuditFilter {
  readonly sink?: string;
  readonly topic?: string;
  readonly partition?: number;
}

/**
 * The durable record of data-quality outcomes (ADR 0026). `record` resolves
 * only once its entries are durable (written and fsynced, or committed), and
 * is idempotent per (sink, span, check): an entry for a span already counted
 * (the same span, or one inside it) is not counted again, and an entry whose
 * span holds counted ones replaces them (the checks are deterministic, so it
 * counts the same rows and more). An entry that overlaps a counted one only
 * in part is not counted (a lag in the audit, never a double count).
 */
export interface DqAuditStore {
  record(entries: readonly DqAuditEntry[]): Promise<void>;
  /** The counted windows, by sink, topic, partition, check and start. */
  read(filter?: DqAuditFilter): Promise<readonly DqAuditEntry[]>;
  /** Per check, every counted window of `sink` added up. */
  totals(sink: string): Promise<Readonly<Record<string, DqCheckCounts>>>;
  close(): Promise<void>;
}

/** How the ledger took an entry. */
export type LedgerVerdict = 'added' | 'duplicate' | 'superseded' | 'overlap';

/**
 * The counting rules every store applies, in one place: per (sink, topic,
 * partition, check), windows that never overlap, ascending. A store replays
 * what it holds through a fresh ledger on open and reaches the same state.
 */
export class DqAuditLedger {
  private readonly windows = new Map<string, DqAuditEntry[]>();

  /** What `apply` would do with `entry`, without doing it. */
  judge(entry: DqAuditEntry): LedgerVerdict {
    return this.place(entry).verdict;
  }

  apply(entry: DqAuditEntry): LedgerVerdict {
    const { verdict, list, from, to } = this.place(entry);
    if (verdict === 'added' || verdict === 'superseded') list.splice(from, to - from, entry);
    if (!this.windows.has(keyOf(entry))) this.windows.set(keyOf(entry), list);
    return verdict;
  }

  read(filter: DqAuditFilter = {}): DqAuditEntry[] {
    const out: DqAuditEntry[] = [];
    for (const list of this.windows.values()) {
      for (const e of list) {
        if (filter.sink !== undefined && e.sink !== filter.sink) continue;
        if (filter.topic !== undefined && e.span.topic !== filter.topic) continue;
        if (filter.partition !== undefined && e.span.partition !== filter.partition) continue;
        out.push(e);
      }
    }
    return out.sort(
      (a, b) =>
        compare(a.sink, b.sink) ||
        compare(a.span.topic, b.span.topic) ||
        a.span.partition - b.span.partition ||
        compare(a.check, b.check) ||
        a.span.start - b.span.start,
    );
  }

  totals(sink: string): Record<string, DqCheckCounts> {
    const totals: Record<string, { passed: number; failed: number }> = {};
    for (const e of this.read({ sink })) {
      const t = (totals[e.check] ??= { passed: 0, failed: 0 });
      t.passed += e.passed;
      t.failed += e.failed;
    }
    return totals;
  }

  /** The windows `entry` overlaps, `[from, to)` in its list, and what that makes of it. */
  private place(entry: DqAuditEntry): {
    verdict: LedgerVerdict;
    list: DqAuditEntry[];
    from: number;
    to: number;
  } {
    const list = this.windows.get(keyOf(entry)) ?? [];
    const { start, end } = entry.span;
    // The first window that ends after `start`: the lists never overlap, so ends ascend too.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid]?.span.end ?? 0) <= start) lo = mid + 1;
      else hi = mid;
    }
    let to = lo;
    while (to < list.length && (list[to]?.span.start ?? end) < end) to++;
    const overlapped = list.slice(lo, to);
    if (overlapped.length === 0) return { verdict: 'added', list, from: lo, to };
    if (overlapped.some((w) => w.span.start <= start && end <= w.span.end)) {
      return { verdict: 'duplicate', list, from: lo, to };
    }
    if (overlapped.every((w) => start <= w.span.start && w.span.end <= end)) {
      return { verdict: 'superseded', list, from: lo, to };
    }
    return { verdict: 'overlap', list, from: lo, to };
  }
}

/** Refuses an entry no store may hold, naming the field. */
export function checkEntry(entry: DqAuditEntry): DqAuditEntry {
  const bad = (field: string, why: string): never => {
    throw new PipelineError(
      'TWG_PIPELINE_DQ_AUDIT_INVALID',
      `dq-audit entry ${JSON.stringify(entry)}: ${field} ${why}`,
    );
  };
  if (entry.sink.length === 0) bad('sink', 'is empty');
  if (entry.check.length === 0) bad('check', 'is empty');
  const { span } = entry;
  for (const [field, n] of [
    ['span.partition', span.partition],
    ['span.start', span.start],
    ['span.end', span.end],
    ['passed', entry.passed],
    ['failed', entry.failed],
  ] as const) {
    if (!Number.isSafeInteger(n) || n < 0) bad(field, 'is not a non-negative safe integer');
  }
  if (span.end <= span.start) bad('span.end', `is not after span.start ${span.start}`);
  return entry;
}

/**
 * The in-memory dq-audit store: the same ledger with nothing durable, for
 * tests and for a topology whose audit need not outlive the process. It
 * passes the same contract suite as the file store, reopen aside.
 */
export class InMemoryDqAudit implements DqAuditStore {
  private readonly ledger = new DqAuditLedger();
  private closed = false;

  async record(entries: readonly DqAuditEntry[]): Promise<void> {
    this.open();
    entries.forEach(checkEntry);
    for (const e of entries) this.ledger.apply(e);
  }

  async read(filter?: DqAuditFilter): Promise<readonly DqAuditEntry[]> {
    this.open();
    return this.ledger.read(filter);
  }

  async totals(sink: string): Promise<Readonly<Record<string, DqCheckCounts>>> {
    this.open();
    return this.ledger.totals(sink);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private open(): void {
    if (this.closed) {
      throw new PipelineError('TWG_PIPELINE_STATE', 'the dq-audit store is closed');
    }
  }
}

function keyOf(e: DqAuditEntry): string {
  return JSON.stringify([e.sink, e.span.topic, e.span.partition, e.check]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
