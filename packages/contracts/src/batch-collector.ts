import type { SourceBatch } from '@thalweg/connector-core';
import { ContractViolation, describeError } from './errors.js';

/**
 * Pulls a source's batches for as long as a case needs them. `until` waits
 * for a condition over what arrived, bounded (a source that hangs fails the
 * case instead of hanging it); a pull in progress is kept across calls, so
 * no batch is lost when a wait ends.
 */
export class BatchCollector {
  readonly batches: SourceBatch[] = [];
  readonly controller = new AbortController();
  ended = false;
  failure: unknown = undefined;
  private readonly iterator: AsyncIterator<SourceBatch>;
  private pending: Promise<void> | null = null;

  constructor(source: { batches(signal: AbortSignal): AsyncIterable<SourceBatch> }) {
    this.iterator = source.batches(this.controller.signal)[Symbol.asyncIterator]();
  }

  /** Pulls until `cond` holds or the iteration ends; fails after `limitMs`. */
  async until(
    cond: (c: BatchCollector) => boolean,
    clause: string,
    what: string,
    limitMs: number,
  ): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!cond(this)) {
      if (this.ended) {
        const why = this.failure === undefined ? 'ended' : `failed: ${describeError(this.failure)}`;
        throw new ContractViolation(clause, `the iteration ${why} before ${what}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new ContractViolation(clause, `not ${what} within ${limitMs} ms`);
      await this.pull(left);
    }
  }

  /** Waits for the iteration to end (after an abort or a close); fails after `limitMs`. */
  async end(clause: string, limitMs: number): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new ContractViolation(clause, `the iteration did not end within ${limitMs} ms`);
      await this.pull(left);
    }
  }

  private async pull(ms: number): Promise<void> {
    this.pending ??= this.iterator.next().then(
      (result) => {
        this.pending = null;
        if (result.done === true) this.ended = true;
        else this.batches.push(result.value);
      },
      (error: unknown) => {
        this.pending = null;
        this.ended = true;
        this.failure = error;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([this.pending, timeout]);
    clearTimeout(timer);
  }
}
