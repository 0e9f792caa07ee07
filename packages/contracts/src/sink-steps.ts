import {
  derivedCoverage,
  formatSpan,
  offsetSpan,
  rawAnchor,
  type Confirm,
  type Lane,
  type OffsetSpan,
} from '@thalweg/connector-core';
import { contractRecords, spanKey, type HeldRecord } from './contract-records.js';
import { ContractTarget } from './contract-target.js';
import { check, ContractViolation } from './errors.js';
import type { SinkContractFactory, SinkSubject } from './sink-subject.js';

/** The topic every sink contract case writes. */
export const CONTRACT_TOPIC = 'contract';

/** Two partitions, interleaved, `perPartition` batches of `size` records each, from `first`. */
export function contractSpans(perPartition: number, size = 5, first = 0): OffsetSpan[] {
  const spans: OffsetSpan[] = [];
  for (let i = 0; i < perPartition; i++) {
    for (const partition of [0, 1]) {
      const start = first + i * size;
      spans.push(offsetSpan(CONTRACT_TOPIC, partition, start, start + size));
    }
  }
  return spans;
}

/** One batch of partition 0 from `start`. */
export function oneSpan(start: number, size = 5): OffsetSpan {
  return offsetSpan(CONTRACT_TOPIC, 0, start, start + size);
}

/** The confirmation a batch of `span` carries on `lane`. */
export function confirmFor<L extends Lane>(
  lane: L,
  sink: Parameters<typeof derivedCoverage>[0],
  span: OffsetSpan,
): Confirm<L> {
  // Confirm<L> is a conditional type TypeScript cannot narrow on a runtime
  // lane value; each branch builds exactly the token of its lane.
  return (lane === 'primary-raw' ? rawAnchor(span) : derivedCoverage(sink, span)) as Confirm<L>;
}

/** A submitted batch: what it stands for and how it is confirmed. */
export async function submitSpan<L extends Lane, B>(
  factory: SinkContractFactory<L, B>,
  subject: SinkSubject<L, B>,
  target: ContractTarget<L>,
  span: OffsetSpan,
  label = 'v',
): Promise<void> {
  const records = contractRecords(span, label);
  target.expect(span, records);
  await subject.sink.submit(
    subject.batch(records, span),
    span,
    confirmFor(factory.lane, subject.sink.descriptor.id, span),
  );
}

/** Opens a subject over a fresh store, runs `body`, then closes and disposes whatever happened. */
export async function withSubject<L extends Lane, B>(
  factory: SinkContractFactory<L, B>,
  body: (subject: SinkSubject<L, B>, target: ContractTarget<L>) => Promise<void>,
): Promise<void> {
  const target = new ContractTarget<L>();
  const subject = await factory.open(target);
  target.observe(subject);
  try {
    await body(subject, target);
  } finally {
    // A case that failed the sink has observed the failure already.
    await subject.sink.close().catch(() => undefined);
    await subject.dispose?.();
  }
  target.assertClean();
}

/** How many copies of each id the store holds, and whether copies differ. */
export function tally(held: readonly HeldRecord[]): Map<string, string[]> {
  const byId = new Map<string, string[]>();
  for (const h of held) {
    const list = byId.get(h.idHex);
    if (list === undefined) byId.set(h.idHex, [h.value]);
    else list.push(h.value);
  }
  return byId;
}

/** The ids the store holds with their payloads, or null for a store that only counts. */
export async function heldById<L extends Lane, B>(
  subject: SinkSubject<L, B>,
): Promise<Map<string, string[]> | null> {
  return subject.held === undefined ? null : tally(await subject.held());
}

/**
 * Every record of `spans` (label `v`) is held, under the factory's replay
 * rule; for a store that only counts, its count is that of every record
 * confirmed (copies included).
 */
export async function checkHeldOnce<L extends Lane, B>(
  clause: string,
  factory: SinkContractFactory<L, B>,
  subject: SinkSubject<L, B>,
  spans: readonly OffsetSpan[],
  target: ContractTarget<L>,
): Promise<void> {
  const byId = await heldById(subject);
  if (byId === null) {
    const count = await subject.heldCount?.();
    const want = target.appliedRecords();
    check(
      count === want,
      clause,
      () => `the store counts ${count} records, ${want} were confirmed`,
    );
    return;
  }
  for (const span of spans) {
    for (const r of contractRecords(span)) {
      const copies = byId.get(r.idHex) ?? [];
      check(copies.length > 0, clause, () => `${formatSpan(span)} offset ${r.offset} is not held`);
      check(
        copies.every((v) => v === r.value),
        clause,
        () =>
          `${formatSpan(span)} offset ${r.offset} is held with another payload: ${copies.join(' | ')}`,
      );
      check(
        factory.replay === 'copies-identical' || copies.length === 1,
        clause,
        () => `${formatSpan(span)} offset ${r.offset} is held ${copies.length} times`,
      );
    }
  }
}

export function checkConfirmedOnce(
  clause: string,
  confirmed: readonly string[],
  spans: readonly OffsetSpan[],
): void {
  const want = spans.map(spanKey);
  const counts = new Map<string, number>();
  for (const c of confirmed) counts.set(c, (counts.get(c) ?? 0) + 1);
  for (const w of want) {
    check(counts.get(w) === 1, clause, () => `${w} was confirmed ${counts.get(w) ?? 0} times`);
  }
  check(
    confirmed.length === want.length,
    clause,
    () => `${confirmed.length} confirmations for ${want.length} batches: ${confirmed.join(', ')}`,
  );
}

/**
 * Waits until `cond` holds, looking once per timer turn; a sink that never
 * gets there fails the case after `limitMs` instead of hanging it.
 */
export async function until(
  cond: () => boolean,
  clause: string,
  what: string,
  limitMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new ContractViolation(clause, `${what} within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

export function violation(clause: string, observed: string): never {
  throw new ContractViolation(clause, observed);
}
