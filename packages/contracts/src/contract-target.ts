import {
  formatSpan,
  type Confirm,
  type ConfirmTarget,
  type Lane,
  type OffsetSpan,
  type Receipt,
  type SetAside,
  type SetAsideHook,
} from '@thalweg/connector-core';
import { spanKey, type ContractRecord, type HeldRecord } from './contract-records.js';
import type { SinkSubject } from './sink-subject.js';
import { ContractViolation } from './errors.js';

export interface Applied<L extends Lane> {
  readonly confirm: Confirm<L>;
  readonly receipt: Receipt;
}

/** Event-loop turns the target takes per confirmation: a target that is not instant (a coverage write). */
const APPLY_TURNS = 3;

function turns(n: number): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < n; i++) p = p.then(() => new Promise<void>((r) => setImmediate(r)));
  return p;
}

/**
 * The confirmation target the contract hands every sink. At each `apply`
 * it reads the store (the subject's `held`) and checks that every record
 * of the confirmed span is there with its payload: a confirmation that
 * leads durability is a violation, caught at the moment it happens. It
 * also takes a few event-loop turns per confirmation, so a flush that
 * resolves before its confirmations were applied shows, and counts how
 * many applications overlap (the ack lane applies one at a time).
 *
 * Violations are collected, not thrown: a sink treats a throwing target
 * as a confirmation failure and carries on, which would hide them.
 */
export class ContractTarget<L extends Lane> implements ConfirmTarget<L> {
  readonly applied: Applied<L>[] = [];
  /** The batches the sink set aside, in the order it settled them. */
  readonly asides: { readonly span: OffsetSpan; readonly refusal: SetAside }[] = [];
  readonly violations: string[] = [];
  maxConcurrent = 0;
  private active = 0;
  private readonly expected = new Map<string, readonly ContractRecord[]>();
  private store: Pick<SinkSubject<L, unknown>, 'held' | 'heldCount'> | null = null;

  /** Where `apply` reads what the store holds. */
  observe(store: Pick<SinkSubject<L, unknown>, 'held' | 'heldCount'>): void {
    if ((store.held === undefined) === (store.heldCount === undefined)) {
      throw new ContractViolation('the subject', 'give exactly one of held and heldCount');
    }
    this.store = store;
  }

  /** Confirmations being applied right now. */
  get inProgress(): number {
    return this.active;
  }

  /** Records of every confirmation applied so far (replays included). */
  appliedRecords(): number {
    return this.applied.reduce((n, a) => n + a.receipt.records, 0);
  }

  /** The records a confirmation of `span` stands for. */
  expect(span: OffsetSpan, records: readonly ContractRecord[]): void {
    this.expected.set(spanKey(span), records);
  }

  async apply(confirm: Confirm<L>, receipt: Receipt): Promise<void> {
    this.active += 1;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.active);
    try {
      await this.checkDurable(receipt.span);
      await turns(APPLY_TURNS);
      this.applied.push({ confirm, receipt });
    } finally {
      this.active -= 1;
    }
  }

  /**
   * A batch the sink gave up on. Offered on every lane so that a raw sink
   * reaching it past the types is caught: raw keeps every record. (The
   * hook's type is `never` for raw; the cast gives both lanes this body.)
   */
  readonly setAside = ((_confirm: unknown, span: OffsetSpan, refusal: SetAside) => {
    if (!this.expected.has(spanKey(span))) {
      this.violations.push(`set aside ${formatSpan(span)}, which was never submitted`);
    }
    if (this.applied.some((a) => spanKey(a.receipt.span) === spanKey(span))) {
      this.violations.push(`set aside ${formatSpan(span)}, which was confirmed`);
    }
    this.asides.push({ span, refusal });
    return Promise.resolve();
  }) as unknown as SetAsideHook<L>;

  /** The spans confirmed so far, in confirmation order. */
  confirmedSpans(): string[] {
    return this.applied.map((a) => spanKey(a.receipt.span));
  }

  /** Throws the violations seen so far, if any. */
  assertClean(): void {
    if (this.violations.length > 0) {
      throw new ContractViolation(
        'nothing is confirmed before it is durable',
        this.violations.join('; '),
      );
    }
  }

  private async checkDurable(span: OffsetSpan): Promise<void> {
    const records = this.expected.get(spanKey(span));
    if (records === undefined) {
      this.violations.push(`confirmed ${formatSpan(span)}, which was never submitted`);
      return;
    }
    const store = this.store;
    if (store === null) throw new Error('ContractTarget.observe was not called');
    let held: readonly HeldRecord[];
    try {
      if (store.heldCount !== undefined) {
        const count = await store.heldCount();
        const want = this.appliedRecords() + records.length;
        if (count < want) {
          this.violations.push(
            `confirmed ${formatSpan(span)} while the store counted ${count} of the ${want} records confirmed by then`,
          );
        }
        return;
      }
      held = await (store.held ?? (async () => []))();
    } catch (error) {
      this.violations.push(
        `reading the store at the confirmation of ${formatSpan(span)} failed: ${String(error)}`,
      );
      return;
    }
    const values = new Map<string, string[]>();
    for (const h of held) {
      const list = values.get(h.idHex);
      if (list === undefined) values.set(h.idHex, [h.value]);
      else list.push(h.value);
    }
    const missing = records.filter((r) => !(values.get(r.idHex) ?? []).includes(r.value));
    if (missing.length > 0) {
      this.violations.push(
        `confirmed ${formatSpan(span)} while ${missing.length} of its ${records.length} records ` +
          `were not in the store (first: offset ${missing[0]?.offset})`,
      );
    }
  }
}
