import {
  formatSpan,
  partitionKey,
  SinkError,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type DeliveryPressure,
  type Durability,
  type HeldPartition,
  type Lane,
  type OffsetSpan,
  type PrimaryRawDescriptor,
  type SetAside,
  type SetAsideHook,
  type ReplayableSink,
  type Sink,
  type SinkDescriptor,
  type SourceBatch,
} from '@thalweg/connector-core';

interface Pending<L extends Lane> {
  readonly records: number;
  readonly span: OffsetSpan;
  readonly confirm: Confirm<L>;
  readonly submittedAt: number;
  readonly onDurable: () => void;
}

/**
 * A sink whose durable acknowledgements the test controls: `auto` confirms
 * every batch on the next macrotask, in order; `manual` waits for `ack(n)`.
 * Durability happens in `ack`, before the confirm target is called.
 */
class ControlledSink<L extends Lane> {
  readonly pending: Pending<L>[] = [];
  mode: 'auto' | 'manual' = 'auto';
  failSubmits = false;
  /** Refuses every submit once this many were accepted. */
  failAfter: number | null = null;
  /** Submit waits while this is set (the sink's own backpressure). */
  stallSubmit: Promise<void> | null = null;
  closed = false;
  submitted = 0;
  /**
   * Batches the sink settles without ever confirming them, and carries on
   * (PostgreSQL's `onPoison: 'skip'`): their spans stay gaps.
   */
  skipConfirm: ((span: OffsetSpan) => boolean) | null = null;
  /**
   * Batches the sink sets aside on its ack lane, with why (PostgreSQL's
   * `onPoison: 'skip'`, a group whose retries ran out): settled in order
   * through the target's `setAside`, never confirmed, and it carries on.
   */
  setAsideWith: ((span: OffsetSpan) => SetAside | null) | null = null;
  /** Submits refused alone, with scope `batch`: the sink takes the next one. */
  refuseBatch: ((span: OffsetSpan) => 'poison' | 'transient' | null) | null = null;
  /** Submits waiting on `stallSubmit` right now. */
  waitingSubmits = 0;
  /** Every span a submit was called with, in call order (refused ones included). */
  readonly admitting: OffsetSpan[] = [];
  readonly log: string[];
  /**
   * The acknowledgements in progress, one after another: a real sink's ack
   * lane applies one confirmation at a time, in order, so `ack` calls made
   * while one runs (the auto timer, flush, a test) queue behind it.
   */
  private acking: Promise<void> = Promise.resolve();

  constructor(
    private readonly target: ConfirmTarget<L>,
    readonly descriptor: SinkDescriptor,
    log: string[],
  ) {
    this.log = log;
  }

  protected enqueue(
    span: OffsetSpan,
    records: number,
    confirm: Confirm<L>,
    onDurable: () => void,
  ): void {
    this.pending.push({ span, records, confirm, submittedAt: Date.now(), onDurable });
    this.submitted += 1;
    if (this.mode === 'auto') setTimeout(() => void this.ack(1), 0);
  }

  protected async admit(span: OffsetSpan): Promise<void> {
    if (this.closed) throw this.refusal('fatal-config', 'submit after close');
    this.admitting.push(span);
    const refused = this.refuseBatch?.(span) ?? null;
    if (refused !== null) {
      throw new SinkError({
        sink: this.descriptor.id,
        errorClass: refused,
        message: `${formatSpan(span)} refused alone (injected ${refused})`,
        scope: 'batch',
      });
    }
    if (this.failSubmits || (this.failAfter !== null && this.submitted >= this.failAfter))
      throw this.refusal('transient', 'refused (injected)');
    if (this.stallSubmit !== null) {
      this.waitingSubmits += 1;
      try {
        await this.stallSubmit;
      } finally {
        this.waitingSubmits -= 1;
      }
    }
  }

  /** A coded refusal naming the sink, as every real sink's is (SinkError). */
  protected refusal(errorClass: 'transient' | 'fatal-config', message: string): SinkError {
    return new SinkError({ sink: this.descriptor.id, errorClass, message });
  }

  /**
   * Makes the `n` oldest pending batches durable, then confirms them in
   * order; after any acknowledgement already in progress.
   */
  ack(n = Infinity): Promise<void> {
    const done = this.acking.then(() => this.ackNow(n));
    this.acking = done.catch(() => undefined);
    return done;
  }

  private async ackNow(n: number): Promise<void> {
    const batch = this.pending.splice(0, Math.min(n, this.pending.length));
    for (const p of batch) {
      if (this.skipConfirm?.(p.span) === true) {
        this.log.push(`skipped ${this.descriptor.id} ${p.span.partition}:${p.span.end}`);
        continue;
      }
      const aside = this.setAsideWith?.(p.span) ?? null;
      if (aside !== null) {
        this.log.push(`set aside ${this.descriptor.id} ${p.span.partition}:${p.span.end}`);
        // Only a secondary's target has the hook; this double serves both lanes.
        const hook = this.target.setAside as SetAsideHook<Lane> | undefined;
        await hook?.(p.confirm as Confirm<'secondary'>, p.span, aside);
        continue;
      }
      p.onDurable();
      this.log.push(`durable ${this.descriptor.id} ${p.span.partition}:${p.span.end}`);
      await this.target.apply(p.confirm, {
        sink: this.descriptor.id,
        span: p.span,
        durability:
          this.descriptor.durability.kind === 'none' ? 'none' : this.descriptor.durability.kind,
        records: p.records,
        bytes: 0,
        submittedAt: p.submittedAt,
        confirmedAt: Date.now(),
      });
    }
  }

  /** Resolves once every batch accepted before the call is durable and its confirmation applied. */
  async flush(): Promise<void> {
    if (this.mode === 'auto') await this.ack();
    while (this.pending.length > 0) await new Promise((r) => setTimeout(r, 1));
    // The last batch left `pending` when its acknowledgement began, not
    // when its confirmation was applied: wait for that too.
    await this.acking;
  }

  /** Refuses submits from the call on, as the real sinks do, then flushes. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}

export class MemoryRawSink
  extends ControlledSink<'primary-raw'>
  implements ReplayableSink<SourceBatch>
{
  declare readonly descriptor: PrimaryRawDescriptor;
  /** The memory sources' cluster; a test sets another to open a mismatched raw. */
  cluster = 'memory';
  failFlush = false;
  /** The batches its queue holds at most: `pressure()` reads pending batches against it. */
  queueCapacity = 64;
  /** Writes failing in a row, as `pressure()` reports them (a test sets it). */
  failingWrites = 0;
  /** While set, `held()` waits for it (a slow planning read). */
  heldGate: Promise<void> | null = null;
  heldCalls = 0;

  constructor(
    target: ConfirmTarget<'primary-raw'>,
    log: string[] = [],
    id = 'raw',
    /** Durable records per partition, by offset; pass one in to share raw between runs. */
    readonly stored = new Map<string, Map<number, Uint8Array>>(),
  ) {
    super(
      target,
      {
        id: sinkId(id),
        kind: 'memory-raw',
        durability: { kind: 'flush-close' },
        recovery: { kind: 'readable' },
      },
      log,
    );
  }

  /** Batches submitted and not yet durable, over `queueCapacity`: raw's queue as flow control reads it. */
  pressure(): DeliveryPressure {
    return {
      queueFill: Math.min(1, this.pending.length / this.queueCapacity),
      consecutiveFailures: this.failingWrites,
    };
  }

  async submit(
    batch: SourceBatch,
    span: OffsetSpan,
    confirm: Confirm<'primary-raw'>,
  ): Promise<void> {
    await this.admit(span);
    this.enqueue(span, batch.records.length, confirm, () => {
      const key = partitionKey(span);
      let held = this.stored.get(key);
      if (held === undefined) this.stored.set(key, (held = new Map<number, Uint8Array>()));
      for (const r of batch.records) held.set(r.offset, r.value);
    });
  }

  override async flush(): Promise<void> {
    if (this.failFlush) throw this.refusal('transient', 'raw flush failed (injected)');
    await super.flush();
  }

  /** The offsets `[0, n)` are all held. */
  holdsPrefix(topic: string, partition: number, n: number): boolean {
    const held = this.stored.get(partitionKey({ topic, partition }));
    for (let o = 0; o < n; o++) if (!held?.has(o)) return false;
    return true;
  }

  async held(): Promise<HeldPartition[]> {
    this.heldCalls += 1;
    if (this.heldGate !== null) await this.heldGate;
    const out: HeldPartition[] = [];
    for (const [key, offsets] of this.stored) {
      const [topic = '', partition = '0'] = key.split('\u0000');
      const sorted = [...offsets.keys()].sort((a, b) => a - b);
      const spans: OffsetSpan[] = [];
      for (const o of sorted) {
        const last = spans[spans.length - 1];
        if (last !== undefined && last.end === o) spans[spans.length - 1] = { ...last, end: o + 1 };
        else spans.push({ topic, partition: Number(partition), start: o, end: o + 1 });
      }
      out.push({ partition: { topic, partition: Number(partition) }, spans });
    }
    return out;
  }

  async *read(span: OffsetSpan): AsyncIterable<SourceBatch> {
    const held = this.stored.get(partitionKey(span)) ?? new Map<number, Uint8Array>();
    const records = [...held.entries()]
      .filter(([o]) => o >= span.start && o < span.end)
      .sort((a, b) => a[0] - b[0])
      .map(([offset, value]) => ({ offset, key: null, value, timestamp: 0, headers: [] }));
    if (records.length > 0) yield { span, records };
  }
}

export interface MemoryRow {
  readonly offset: number;
  readonly text: string;
}

export class MemorySecondary
  extends ControlledSink<'secondary'>
  implements Sink<'secondary', MemoryRow[]>
{
  constructor(
    target: ConfirmTarget<'secondary'>,
    id = 'secondary',
    durability: Durability = { kind: 'server-ack' },
    log: string[] = [],
    /** Durable rows by `partition:offset`; pass one in to share a table between runs. */
    readonly rows = new Map<string, MemoryRow>(),
  ) {
    super(
      target,
      { id: sinkId(id), kind: 'memory', durability, recovery: { kind: 'write-only' } },
      log,
    );
  }

  /** How many times each row (`partition:offset`) was made durable: a write done twice shows 2. */
  readonly writes = new Map<string, number>();

  async submit(batch: MemoryRow[], span: OffsetSpan, confirm: Confirm<'secondary'>): Promise<void> {
    await this.admit(span);
    this.enqueue(span, batch.length, confirm, () => {
      for (const row of batch) {
        const key = `${span.partition}:${row.offset}`;
        this.rows.set(key, row);
        this.writes.set(key, (this.writes.get(key) ?? 0) + 1);
      }
    });
  }
}

/** Decodes each record as JSON; a record that is not JSON is quarantined with `decode`. */
export function jsonRows(batch: SourceBatch) {
  const rows: MemoryRow[] = [];
  const quarantined: { offset: number; reason: 'decode'; detail: string }[] = [];
  for (const r of batch.records) {
    const text = new TextDecoder().decode(r.value);
    try {
      JSON.parse(text);
      rows.push({ offset: r.offset, text });
    } catch (error) {
      quarantined.push({ offset: r.offset, reason: 'decode', detail: String(error) });
    }
  }
  return { batch: rows.length === 0 ? null : rows, quarantined };
}
