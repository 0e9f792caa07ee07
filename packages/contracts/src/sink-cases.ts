import { formatSpan, type Lane } from '@thalweg/connector-core';
import { contractRecords, spanKey } from './contract-records.js';
import { check, describeError, isCoded, outcome } from './errors.js';
import { pressureReported } from './pressure-case.js';
import {
  checkConfirmedOnce,
  checkHeldOnce,
  confirmFor,
  contractSpans,
  oneSpan,
  submitSpan,
  heldById,
  until,
  withSubject,
} from './sink-steps.js';
import type { SinkContractFactory } from './sink-subject.js';

/** One clause of the sink contract, runnable on its own (the suite's self-tests run them against broken sinks). */
export interface SinkContractCase {
  readonly name: string;
  /** Whether the factory declares what the case needs; a case it does not apply to is not registered. */
  applies(factory: SinkContractFactory<Lane, unknown>): boolean;
  run<L extends Lane, B>(factory: SinkContractFactory<L, B>): Promise<void>;
}

const always = (): boolean => true;

const durableBeforeConfirm: SinkContractCase = {
  name: 'confirms each batch once, only after it is durable, with a receipt naming the sink',
  applies: always,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const spans = contractSpans(3);
      for (const span of spans) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      const clause = 'every accepted batch is confirmed once, after it is durable';
      checkConfirmedOnce(clause, target.confirmedSpans(), spans);
      const { descriptor } = subject.sink;
      const durability = descriptor.durability.kind;
      for (const { confirm, receipt } of target.applied) {
        const span = formatSpan(receipt.span);
        check(
          receipt.sink === descriptor.id,
          clause,
          () => `receipt of ${span} names sink "${receipt.sink}"`,
        );
        check(
          receipt.durability === durability,
          clause,
          () => `receipt of ${span} says ${receipt.durability}, the descriptor ${durability}`,
        );
        check(
          receipt.records === 5,
          clause,
          () => `receipt of ${span} counts ${receipt.records} records, not 5`,
        );
        const want = confirmFor(factory.lane, descriptor.id, receipt.span);
        check(
          JSON.stringify(confirm) === JSON.stringify(want),
          clause,
          () => `${span} was confirmed with ${JSON.stringify(confirm)}`,
        );
      }
      await checkHeldOnce(clause, factory, subject, spans, target);
    }),
};

const inOrder: SinkContractCase = {
  name: 'confirms in submission order, one confirmation at a time',
  applies: always,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'confirmations are applied in submission order, never two at once';
      const spans = contractSpans(4);
      const half = spans.length / 2;
      for (const span of spans.slice(0, half)) await submitSpan(factory, subject, target, span);
      // The second half goes in while the sink is confirming the first: a
      // sink whose confirmations race each other shows it here.
      await until(() => target.applied.length > 0, clause, 'no batch was confirmed');
      for (const span of spans.slice(half)) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      const got = target.confirmedSpans();
      check(
        got.join(',') === spans.map(spanKey).join(','),
        clause,
        () => `confirmed ${got.join(', ')}; submitted ${spans.map(spanKey).join(', ')}`,
      );
      check(
        target.maxConcurrent === 1,
        clause,
        () => `${target.maxConcurrent} confirmations were applied at once`,
      );
    }),
};

const flushWaits: SinkContractCase = {
  name: 'flush resolves only once every batch accepted before it is confirmed',
  applies: always,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'flush waits for the confirmations of what was accepted before it';
      await subject.sink.flush();
      check(target.applied.length === 0, clause, () => 'an idle flush confirmed something');
      const first = contractSpans(2);
      for (const span of first) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      checkConfirmedOnce(clause, target.confirmedSpans(), first);
      // A flush called while confirmations are being applied waits for them too.
      const second = contractSpans(2, 5, 10);
      for (const span of second) await submitSpan(factory, subject, target, span);
      const done = first.length;
      await until(
        () => target.inProgress > 0 || target.applied.length > done,
        clause,
        'no confirmation of the second batches began',
      );
      await subject.sink.flush();
      checkConfirmedOnce(clause, target.confirmedSpans(), [...first, ...second]);
    }),
};

const closeSemantics: SinkContractCase = {
  name: 'close flushes what was accepted, refuses a later submit with a coded error, and is idempotent',
  applies: always,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'close settles what was accepted and accepts nothing after';
      const spans = contractSpans(2);
      for (const span of spans) await submitSpan(factory, subject, target, span);
      const closing = outcome(subject.sink.close());
      const late = oneSpan(50);
      const refused = outcome(submitSpan(factory, subject, target, late));
      const [closed, submitted] = await Promise.all([closing, refused]);
      check(
        closed.ok,
        clause,
        () => `close rejected: ${closed.ok ? '' : describeError(closed.error)}`,
      );
      check(!submitted.ok, clause, () => `a submit after close() was accepted`);
      check(
        isCoded(submitted.error),
        clause,
        () => `the refusal is ${describeError(submitted.error)}`,
      );
      checkConfirmedOnce(clause, target.confirmedSpans(), spans);
      await checkHeldOnce(clause, factory, subject, spans, target);
      const byId = (await heldById(subject)) ?? new Map<string, string[]>();
      for (const r of contractRecords(late)) {
        check(!byId.has(r.idHex), clause, () => `offset ${r.offset} of the refused submit is held`);
      }
      const again = await outcome(subject.sink.close());
      check(
        again.ok,
        clause,
        () => `a second close rejected: ${again.ok ? '' : describeError(again.error)}`,
      );
    }),
};

const replayOnce: SinkContractCase = {
  name: 'a replayed batch leaves each record id once in the store (or identical copies, for an appending store)',
  applies: always,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'replay by record id is idempotent';
      const spans = contractSpans(2);
      for (const span of spans) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      // The same records again, as a source re-reads them after a crash.
      for (const span of spans) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      check(
        target.applied.length === 2 * spans.length,
        clause,
        () => `${target.applied.length} confirmations for ${2 * spans.length} submits`,
      );
      await checkHeldOnce(clause, factory, subject, spans, target);
    }),
};

const replayAfterRestart: SinkContractCase = {
  name: 'after a restart, replaying what the store holds adds no record twice and lands the new ones',
  applies: (f) => f.restarts === true,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'replay across a restart is idempotent';
      check(
        subject.held !== undefined,
        clause,
        () => 'a store that only counts cannot show a restart',
      );
      const reopen = subject.reopen;
      check(
        reopen !== undefined,
        clause,
        () => 'the factory declares restarts but the subject has no reopen',
      );
      const before = contractSpans(2);
      for (const span of before) await submitSpan(factory, subject, target, span);
      await subject.sink.close();
      const again = await reopen(target);
      target.observe(again);
      try {
        // The last batch of each partition again, then the next ones.
        const replay = [...before.slice(2), ...contractSpans(1, 5, 10)];
        for (const span of replay) await submitSpan(factory, again, target, span);
        await again.sink.flush();
        await checkHeldOnce(clause, factory, again, [...before, ...replay], target);
      } finally {
        await again.sink.close().catch(() => undefined);
        await again.dispose?.();
      }
    }),
};

const malformedRefused: SinkContractCase = {
  name: 'a malformed batch is refused at submit with a coded error, and nothing of it is held',
  applies: (f) => f.refusesMalformed === true,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'a malformed batch changes nothing';
      check(
        subject.held !== undefined,
        clause,
        () => 'a store that only counts cannot show what a refusal left',
      );
      const malformed = subject.malformed;
      check(
        malformed !== undefined,
        clause,
        () => 'the factory declares refusesMalformed but the subject has no malformed',
      );
      const bad = oneSpan(20);
      const records = contractRecords(bad);
      target.expect(bad, records);
      const confirm = confirmFor(factory.lane, subject.sink.descriptor.id, bad);
      const result = await outcome(subject.sink.submit(malformed(records, bad), bad, confirm));
      check(!result.ok, clause, () => 'the malformed batch was accepted');
      check(isCoded(result.error), clause, () => `the refusal is ${describeError(result.error)}`);
      // The sink is still usable, and the refused batch left nothing behind.
      const good = contractSpans(1);
      for (const span of good) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      checkConfirmedOnce(clause, target.confirmedSpans(), good);
      const byId = (await heldById(subject)) ?? new Map<string, string[]>();
      for (const r of records)
        check(
          !byId.has(r.idHex),
          clause,
          () => `offset ${r.offset} of the malformed batch is held`,
        );
    }),
};

/**
 * A fault the sink survives on its own (a transient failure retried in
 * place, a poisoned stream rebuilt and replayed): after it, every batch has
 * landed, confirmed once and in order, and the store holds each once.
 */
function survives(fault: 'transient' | 'poison', name: string, clause: string): SinkContractCase {
  return {
    name,
    applies: (f) => f.faults?.includes(fault) === true,
    run: (factory) =>
      withSubject(factory, async (subject, target) => {
        subject.inject?.(fault);
        const spans = contractSpans(2);
        for (const span of spans) await submitSpan(factory, subject, target, span);
        const flushed = await outcome(subject.sink.flush());
        check(
          flushed.ok,
          clause,
          () => `flush rejected: ${flushed.ok ? '' : describeError(flushed.error)}`,
        );
        check(
          target.confirmedSpans().join(',') === spans.map(spanKey).join(','),
          clause,
          () => `confirmed ${target.confirmedSpans().join(', ')}`,
        );
        await checkHeldOnce(clause, factory, subject, spans, target);
      }),
  };
}

const transientRetried = survives(
  'transient',
  'a transient failure is retried in place: every batch lands, confirmed once and in order',
  'a transient failure costs a retry, never a batch',
);

const fatalStops: SinkContractCase = {
  name: 'a fatal failure fails the sink with a coded, non-retryable error and confirms nothing after it',
  applies: (f) => f.faults?.includes('fatal') === true,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'a fatal failure stops the sink loudly';
      const before = contractSpans(1);
      for (const span of before) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      subject.inject?.('fatal');
      const after = contractSpans(1, 5, 5);
      const submits = after.map((span) => outcome(submitSpan(factory, subject, target, span)));
      const flushed = await outcome(subject.sink.flush());
      await Promise.all(submits);
      check(!flushed.ok, clause, () => 'flush resolved after a fatal failure');
      const e = flushed.error;
      check(isCoded(e) && !e.canRetry, clause, () => `flush rejected with ${describeError(e)}`);
      checkConfirmedOnce(clause, target.confirmedSpans(), before);
      const later = await outcome(submitSpan(factory, subject, target, oneSpan(30)));
      check(!later.ok, clause, () => 'a failed sink accepted a submit');
      check(isCoded(later.error), clause, () => `the refusal is ${describeError(later.error)}`);
      const closed = await outcome(subject.sink.close());
      check(
        closed.ok || isCoded(closed.error),
        clause,
        () => `close rejected with ${closed.ok ? '' : describeError(closed.error)}`,
      );
    }),
};

const poisonRebuilt = survives(
  'poison',
  'a poisoned stream is rebuilt and replayed: every batch lands and is confirmed once, in order',
  'poison rebuilds the stream and loses nothing',
);

const setAsideSettled: SinkContractCase = {
  name: 'a batch whose retries ran out is set aside in its place: never confirmed or held, and the next batches land',
  applies: (f) => f.faults?.includes('exhausted') === true,
  run: (factory) =>
    withSubject(factory, async (subject, target) => {
      const clause = 'a batch the sink gives up on costs that batch, never the sink';
      check(
        factory.lane === 'secondary',
        clause,
        () => 'a primary-raw sink never sets a batch aside',
      );
      const victim = oneSpan(40);
      subject.inject?.('exhausted');
      await submitSpan(factory, subject, target, victim);
      const settledAside = await outcome(subject.sink.flush());
      check(
        settledAside.ok,
        clause,
        () => `flush rejected: ${settledAside.ok ? '' : describeError(settledAside.error)}`,
      );
      const after = contractSpans(1);
      for (const span of after) await submitSpan(factory, subject, target, span);
      await subject.sink.flush();
      const asides = target.asides.map((a) => `${spanKey(a.span)} ${a.refusal.reason}`);
      check(
        asides.join(',') === `${spanKey(victim)} retry-exhausted`,
        clause,
        () => `set aside: ${asides.join(', ') || 'nothing'}`,
      );
      const error = target.asides[0]?.refusal.error;
      check(isCoded(error), clause, () => `the reason's error is ${describeError(error)}`);
      checkConfirmedOnce(clause, target.confirmedSpans(), after);
      await checkHeldOnce(clause, factory, subject, after, target);
      const byId = (await heldById(subject)) ?? new Map<string, string[]>();
      for (const r of contractRecords(victim)) {
        check(
          !byId.has(r.idHex),
          clause,
          () => `offset ${r.offset} of the set-aside batch is held`,
        );
      }
    }),
};

/** Every clause of the sink contract, in the order the suite runs them. */
export const SINK_CONTRACT_CASES: readonly SinkContractCase[] = [
  durableBeforeConfirm,
  inOrder,
  flushWaits,
  closeSemantics,
  replayOnce,
  replayAfterRestart,
  malformedRefused,
  transientRetried,
  fatalStops,
  poisonRebuilt,
  setAsideSettled,
  pressureReported,
];
