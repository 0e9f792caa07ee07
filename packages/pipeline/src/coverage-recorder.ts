import { ThalwegError } from '@thalweg/connector-core';
import type { CoverageStore, DurableReceipt } from '@thalweg/offset-store';
import { PipelineError } from './errors.js';

export interface RecorderStats {
  readonly recorded: number;
  readonly buffered: number;
  readonly failures: number;
  /** Receipts given up on while the store kept failing: their spans stay gaps. */
  readonly abandoned: number;
}

/** Receipts held while the store fails; past this the oldest are let go (they become gaps). */
const MAX_BUFFERED = 100_000;

/**
 * Records coverage off the ack path. A sink's ack lane hands over the
 * durable receipt and returns; receipts are written to the coverage store
 * in bulk, one write at a time. A failed write keeps its receipts and is
 * retried on the next round: until then the spans are gaps (lag, which costs
 * a replay), never claimed before the sink's durable acknowledgement.
 *
 * Only a failure that may pass is retried. One the store classes
 * `fatal-config` (an unknown sink, corrupt or newer stored coverage, a closed
 * store) fails the same way every round: retrying it would log forever while
 * every span stays a gap and the run looks healthy, so it goes to `onFatal`,
 * which stops the pipeline with it.
 */
export class CoverageRecorder {
  private buffer: DurableReceipt[] = [];
  private running: Promise<void> | null = null;
  private recorded = 0;
  private failures = 0;
  private abandoned = 0;

  constructor(
    private readonly store: CoverageStore,
    private readonly log: (line: string) => void,
    private readonly onFatal: (error: PipelineError) => void = () => undefined,
    /** Told of each round's receipts once the store has them. */
    private readonly onRecorded: (receipts: readonly DurableReceipt[]) => void = () => undefined,
  ) {}

  add(receipt: DurableReceipt): void {
    this.buffer.push(receipt);
    if (this.buffer.length > MAX_BUFFERED) {
      const excess = this.buffer.length - MAX_BUFFERED;
      this.buffer.splice(0, excess);
      this.abandoned += excess;
    }
  }

  /** Writes what is buffered; single-flight. Never throws: a failure is counted and retried. */
  flush(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Flushes until the buffer is empty or a write fails (shutdown). */
  async drain(): Promise<boolean> {
    for (;;) {
      if (this.running !== null) await this.running;
      if (this.buffer.length === 0) return true;
      const before = this.failures;
      await this.flush();
      if (this.failures > before) return false;
    }
  }

  /**
   * Writes what was handed over before the call, not what arrives meanwhile:
   * while acknowledgements keep coming (ingest in the `both` role), `drain`
   * may never find the buffer empty. False if that write failed.
   */
  async writeHandedOver(): Promise<boolean> {
    if (this.running !== null) await this.running;
    if (this.buffer.length === 0) return true;
    const before = this.failures;
    await this.flush();
    return this.failures === before;
  }

  stats(): RecorderStats {
    return {
      recorded: this.recorded,
      buffered: this.buffer.length,
      failures: this.failures,
      abandoned: this.abandoned,
    };
  }

  private async round(): Promise<void> {
    if (this.buffer.length === 0) return;
    const receipts = this.buffer;
    this.buffer = [];
    try {
      await this.store.recordDurable(receipts);
      this.recorded += receipts.length;
      this.onRecorded(receipts);
    } catch (cause) {
      this.failures += 1;
      this.buffer = receipts.concat(this.buffer);
      if (cause instanceof ThalwegError && cause.errorClass === 'fatal-config') {
        this.onFatal(
          new PipelineError(
            'TWG_PIPELINE_COVERAGE_FAILED',
            `the coverage store refused ${receipts.length} receipts and no retry can change that ` +
              `(${cause.message}); their spans stay gaps`,
            cause,
          ),
        );
        return;
      }
      this.log(
        `coverage write of ${receipts.length} receipts failed, retrying next round: ` +
          (cause instanceof Error ? cause.message : String(cause)),
      );
    }
  }
}
