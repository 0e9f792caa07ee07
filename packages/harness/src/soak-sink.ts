import {
  SinkError,
  type Confirm,
  type ConfirmTarget,
  type OffsetSpan,
  type Sink,
  type SinkDescriptor,
  type SinkId,
  type SourceBatch,
} from '@thalweg/connector-core';

interface Pending {
  readonly span: OffsetSpan;
  readonly records: number;
  readonly confirm: Confirm<'secondary'>;
  readonly submittedAt: number;
}

/**
 * The soak's secondary: acknowledges every batch durably on the next turn
 * of the event loop and keeps nothing but counts (a sink that kept rows
 * would be the growth the soak looks for). Every `stallEvery`-th submit
 * waits for `stall` first, as a stream rebuild would: the lane behind it
 * fills and sheds, and recovery replays the gaps from raw through this sink.
 */
export class SoakSecondary implements Sink<'secondary', SourceBatch> {
  readonly descriptor: SinkDescriptor;
  private readonly pending: Pending[] = [];
  private acking = false;
  private submits = 0;
  private idle: (() => void)[] = [];
  private closed = false;
  confirmedRecords = 0;
  stalls = 0;

  constructor(
    id: SinkId,
    private readonly target: ConfirmTarget<'secondary'>,
    private readonly stallEvery: number,
    private readonly stall: () => Promise<void>,
  ) {
    this.descriptor = {
      id,
      kind: 'soak-counting',
      durability: { kind: 'server-ack' },
      recovery: { kind: 'write-only' },
    };
  }

  async submit(batch: SourceBatch, span: OffsetSpan, confirm: Confirm<'secondary'>): Promise<void> {
    if (this.closed) {
      throw new SinkError({
        sink: this.descriptor.id,
        errorClass: 'fatal-config',
        message: 'submit after close',
      });
    }
    this.submits += 1;
    if (this.stallEvery > 0 && this.submits % this.stallEvery === 0) {
      this.stalls += 1;
      await this.stall();
    }
    this.pending.push({ span, records: batch.records.length, confirm, submittedAt: Date.now() });
    if (!this.acking) {
      this.acking = true;
      setImmediate(() => void this.ackAll());
    }
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0 && !this.acking) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Refuses submits from the call on, as a real sink does, then flushes. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async ackAll(): Promise<void> {
    while (this.pending.length > 0) {
      const p = this.pending.shift() as Pending;
      this.confirmedRecords += p.records;
      await this.target.apply(p.confirm, {
        sink: this.descriptor.id,
        span: p.span,
        durability: 'server-ack',
        records: p.records,
        bytes: 0,
        submittedAt: p.submittedAt,
        confirmedAt: Date.now(),
      });
    }
    this.acking = false;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
