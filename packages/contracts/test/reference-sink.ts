import {
  SinkError,
  sinkId,
  type Confirm,
  type ConfirmTarget,
  type DeliveryPressure,
  type OffsetSpan,
  type Sink,
  type SinkDescriptor,
} from '@thalweg/connector-core';
import type { ContractRecord, HeldRecord, SinkContractFactory, SinkFault } from '../src/index.js';

/** Ways to break the reference sink, each against one clause of the contract. */
export interface Breakage {
  readonly confirmBeforeWrite?: boolean;
  readonly confirmConcurrently?: boolean;
  readonly confirmNewestFirst?: boolean;
  readonly flushBeforeConfirm?: boolean;
  readonly acceptAfterClose?: boolean;
  readonly appendOnReplay?: boolean;
  readonly retryNothing?: boolean;
  readonly plainErrors?: boolean;
  readonly acceptMalformed?: boolean;
  /** Settles a batch it gave up on without telling the target why. */
  readonly silentSetAside?: boolean;
  /** Fails, as a whole, on a batch whose retries ran out. */
  readonly failWhenExhausted?: boolean;
  /** Reports a half-full queue even once everything is confirmed. */
  readonly stalePressure?: boolean;
}

interface Queued {
  readonly records: readonly ContractRecord[];
  readonly span: OffsetSpan;
  readonly confirm: Confirm<'secondary'>;
}

/**
 * A faithful in-memory sink (and, with a `Breakage`, an unfaithful one):
 * one writer loop writes each queued batch to the store, then applies its
 * confirmation; flush waits for the confirmations of what was accepted.
 */
export class ReferenceSink implements Sink<'secondary', readonly ContractRecord[]> {
  readonly descriptor: SinkDescriptor = {
    id: sinkId('reference'),
    kind: 'reference',
    durability: { kind: 'server-ack' },
    recovery: { kind: 'write-only' },
  };
  readonly store: HeldRecord[] = [];
  private readonly queue: Queued[] = [];
  private accepted = 0;
  private confirmed = 0;
  private waiters: { upTo: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private running = false;
  private closed = false;
  private failure: Error | null = null;
  private fault: SinkFault | null = null;

  constructor(
    private readonly target: ConfirmTarget<'secondary'>,
    private readonly broken: Breakage = {},
  ) {}

  inject(fault: SinkFault): void {
    this.fault = fault;
  }

  /** Its queue against a bound of 16 batches; it retries nothing in a row. */
  pressure(): DeliveryPressure {
    const queueFill =
      this.broken.stalePressure === true ? 0.5 : Math.min(1, this.queue.length / 16);
    return { queueFill, consecutiveFailures: 0 };
  }

  async submit(
    batch: readonly ContractRecord[],
    span: OffsetSpan,
    confirm: Confirm<'secondary'>,
  ): Promise<void> {
    if (this.closed && this.broken.acceptAfterClose !== true)
      throw this.error('fatal-config', 'closed');
    if (this.failure !== null) throw this.failure;
    if (batch.length === 0 && this.broken.acceptMalformed !== true) {
      throw this.error('fatal-config', 'an empty batch');
    }
    this.queue.push({ records: batch, span, confirm });
    this.accepted += 1;
    if (!this.running) {
      this.running = true;
      setImmediate(() => void this.run());
    }
  }

  flush(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const upTo = this.broken.flushBeforeConfirm === true ? 0 : this.accepted;
    if (this.confirmed >= upTo) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ upTo, resolve, reject }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private error(errorClass: 'transient' | 'fatal-config', message: string): Error {
    if (this.broken.plainErrors === true) return new Error(message);
    return new SinkError({ sink: this.descriptor.id, errorClass, message });
  }

  private async run(): Promise<void> {
    const batches = this.queue.splice(0);
    if (this.broken.confirmNewestFirst === true) batches.reverse();
    try {
      const confirms: Promise<void>[] = [];
      for (const q of batches) {
        if (this.broken.confirmBeforeWrite === true) await this.apply(q);
        if ((await this.write(q)) === 'given-up') {
          await this.setAside(q);
          continue;
        }
        if (this.broken.confirmBeforeWrite === true) continue;
        if (this.broken.confirmConcurrently === true) confirms.push(this.apply(q));
        else await this.apply(q);
      }
      await Promise.all(confirms);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      for (const w of this.waiters.splice(0)) w.reject(this.failure);
      return;
    }
    this.running = false;
    if (this.queue.length > 0) {
      this.running = true;
      setImmediate(() => void this.run());
    }
  }

  private async write(q: Queued): Promise<'written' | 'given-up'> {
    for (let attempt = 1; ; attempt++) {
      const fault = this.fault;
      this.fault = null;
      if (fault === 'fatal') throw this.error('fatal-config', 'injected fatal');
      if (fault === 'exhausted') {
        if (this.broken.failWhenExhausted === true) throw this.error('transient', 'gave up');
        return 'given-up';
      }
      if (fault === 'transient') {
        if (this.broken.retryNothing === true) throw this.error('transient', 'injected transient');
        continue;
      }
      break;
    }
    await new Promise((r) => setImmediate(r));
    for (const r of q.records) {
      const held =
        this.broken.appendOnReplay !== true && this.store.some((h) => h.idHex === r.idHex);
      if (!held) this.store.push({ idHex: r.idHex, value: r.value });
    }
    return 'written';
  }

  /** Settled in its place, unconfirmed, with its reason. */
  private async setAside(q: Queued): Promise<void> {
    if (this.broken.silentSetAside !== true) {
      const error = this.error('transient', `retries ran out on ${q.span.start}`);
      await this.target.setAside?.(q.confirm, q.span, { reason: 'retry-exhausted', error });
    }
    this.settled();
  }

  private async apply(q: Queued): Promise<void> {
    await this.target.apply(q.confirm, {
      sink: this.descriptor.id,
      span: q.span,
      durability: 'server-ack',
      records: q.records.length,
      bytes: 0,
      submittedAt: Date.now(),
      confirmedAt: Date.now(),
    });
    this.settled();
  }

  private settled(): void {
    this.confirmed += 1;
    this.waiters = this.waiters.filter((w) => {
      if (this.confirmed < w.upTo) return true;
      w.resolve();
      return false;
    });
  }
}

/** The contract factory of a reference sink, faithful or broken. */
export function referenceFactory(
  broken: Breakage = {},
): SinkContractFactory<'secondary', readonly ContractRecord[]> {
  return {
    lane: 'secondary',
    replay: 'deduplicated',
    faults: ['transient', 'fatal', 'exhausted'],
    refusesMalformed: true,
    restarts: true,
    open: async (target) => open(target, broken, []),
  };
}

function open(
  target: ConfirmTarget<'secondary'>,
  broken: Breakage,
  store: HeldRecord[],
): ReturnType<SinkContractFactory<'secondary', readonly ContractRecord[]>['open']> {
  const sink = new ReferenceSink(target, broken);
  sink.store.push(...store);
  return Promise.resolve({
    sink,
    batch: (records) => records,
    held: async () => [...sink.store],
    inject: (fault) => sink.inject(fault),
    malformed: () => [],
    reopen: (next) => open(next, broken, sink.store),
  });
}

/** The same sink observed only by how many records its store holds, as a counting sink is. */
export function countedFactory(
  broken: Breakage = {},
): SinkContractFactory<'secondary', readonly ContractRecord[]> {
  return {
    lane: 'secondary',
    replay: 'copies-identical',
    faults: ['transient', 'fatal', 'exhausted'],
    open: async (target) => {
      const sink = new ReferenceSink(target, { ...broken, appendOnReplay: true });
      return {
        sink,
        batch: (records) => records,
        heldCount: async () => sink.store.length,
        inject: (fault) => sink.inject(fault),
      };
    },
  };
}
