import type { OffsetSpan, SourceBatch } from '@thalweg/connector-core';
import type { Derive, Derived, DqCheckCounts, DqOutcome } from '../topology.js';
import type { DqAuditEntry, DqAuditStore } from './dq-audit-store.js';

export interface DqAuditStats {
  /** Entries the store made durable. */
  readonly recorded: number;
  readonly buffered: number;
  readonly failures: number;
  /** Entries let go while the store kept failing: those windows are missing from the trail. */
  readonly abandoned: number;
  /**
   * Per sink and check, what the checks found in this process, live and in
   * recovery (a replayed span counts again here; the store counts it once).
   */
  readonly bySink: Readonly<Record<string, Readonly<Record<string, DqCheckCounts>>>>;
}

/** Entries held while the store fails; past this the oldest are let go (and counted). */
const MAX_BUFFERED = 100_000;

/**
 * Records data-quality outcomes off every ack path (ADR 0026). A checked
 * derivation's outcome is handed over synchronously as the derivation
 * returns; a background round writes what is buffered to the store, one
 * round at a time (each round is one append and one fsync for the file
 * store), so the lanes never wait on the audit. A handed-over outcome starts
 * a round when none is running; after a failed round the entries stay
 * buffered and wait for the next `flush` (each flow cycle), so a failing
 * store is retried at the cycle's pace, not at every batch.
 */
export class DqAuditRecorder {
  private buffer: DqAuditEntry[] = [];
  private running: Promise<void> | null = null;
  private failing = false;
  private recorded = 0;
  private failures = 0;
  private abandoned = 0;
  private readonly bySink: Record<string, Record<string, { passed: number; failed: number }>> = {};

  constructor(
    private readonly store: DqAuditStore | null,
    private readonly log: (line: string) => void,
  ) {}

  /** `derive`, reporting each outcome of its checks as `sink()`'s. */
  audited<B>(derive: Derive<B>, sink: () => string): Derive<B> {
    const report = (batch: SourceBatch, derived: Derived<B>): Derived<B> => {
      if (derived.dq !== undefined) this.add(sink(), batch.span, derived.dq);
      return derived;
    };
    return (batch) => {
      const derived = derive(batch);
      return derived instanceof Promise
        ? derived.then((d) => report(batch, d))
        : report(batch, derived);
    };
  }

  /** Hands over one span's outcome; never waits. */
  add(sink: string, span: OffsetSpan, outcome: DqOutcome): void {
    const seen = (this.bySink[sink] ??= {});
    for (const [check, counts] of Object.entries(outcome)) {
      const s = (seen[check] ??= { passed: 0, failed: 0 });
      s.passed += counts.passed;
      s.failed += counts.failed;
      if (this.store !== null) this.buffer.push({ sink, span, check, ...counts });
    }
    if (this.buffer.length > MAX_BUFFERED) {
      const excess = this.buffer.length - MAX_BUFFERED;
      this.buffer.splice(0, excess);
      this.abandoned += excess;
      this.log(`dq-audit: ${excess} entries let go while the store fails; their windows are lost`);
    }
    if (!this.failing) void this.flush();
  }

  /**
   * Writes what is buffered; single-flight, never rejects (a failure is
   * counted, logged and retried on the next call). The flow cycle calls it.
   */
  flush(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null;
      // What arrived during the round starts the next one; this call's promise does not wait for it.
      if (this.buffer.length > 0 && !this.failing) void this.flush();
    });
    return this.running;
  }

  /** Flushes until nothing is buffered or a write fails (shutdown); false if one failed. */
  async drain(): Promise<boolean> {
    for (;;) {
      if (this.running !== null) await this.running;
      if (this.buffer.length === 0) return true;
      const before = this.failures;
      await this.flush();
      if (this.failures > before) return false;
    }
  }

  /** Drains, then closes the store (the pipeline owns it). */
  async close(): Promise<void> {
    if (!(await this.drain())) {
      this.log(`dq-audit: ${this.buffer.length} entries could not be recorded at shutdown`);
    }
    await this.store?.close();
  }

  stats(): DqAuditStats {
    const bySink: Record<string, Record<string, DqCheckCounts>> = {};
    for (const [sink, checks] of Object.entries(this.bySink)) {
      bySink[sink] = Object.fromEntries(
        Object.entries(checks).map(([name, c]) => [name, { ...c }]),
      );
    }
    return {
      recorded: this.recorded,
      buffered: this.buffer.length,
      failures: this.failures,
      abandoned: this.abandoned,
      bySink,
    };
  }

  private async round(): Promise<void> {
    if (this.store === null || this.buffer.length === 0) return;
    const entries = this.buffer;
    this.buffer = [];
    try {
      await this.store.record(entries);
      this.recorded += entries.length;
      this.failing = false;
    } catch (cause) {
      this.failures += 1;
      this.failing = true;
      this.buffer = entries.concat(this.buffer);
      this.log(
        `dq-audit write of ${entries.length} entries failed, retrying next cycle: ` +
          (cause instanceof Error ? cause.message : String(cause)),
      );
    }
  }
}
