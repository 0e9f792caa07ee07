import {
  offsetSpan,
  rawAnchor,
  derivedCoverage,
  sinkId,
  type ConfirmTarget,
  type Receipt,
  type ReplayableSink,
  type Sink,
  type SourceBatch,
} from '@thalweg/connector-core';
import { InMemoryCoverage, type CoverageTier, type DurableReceipt } from '@thalweg/offset-store';
import { describe, expect, it } from 'vitest';
import { Tripwire, type CrashAt } from '../src/crash-point.js';
import {
  killableConfirm,
  killableCoverage,
  killableRaw,
  killableSecondary,
  killableTier,
} from '../src/killable-parts.js';

const RAW = sinkId('raw');
const PG = sinkId('pg');
const span = offsetSpan('t', 0, 0, 10);
const receipt = (sink = RAW): Receipt => ({
  sink,
  span,
  durability: 'flush-close',
  records: 10,
  bytes: 100,
  submittedAt: 0,
  confirmedAt: 1,
});

/** Notes every write that reaches the store. */
class RecordingCoverage extends InMemoryCoverage {
  constructor(private readonly events: string[]) {
    super({ sinks: [RAW] });
  }

  override async recordDurable(receipts: readonly DurableReceipt[]): Promise<void> {
    this.events.push('recorded');
    await super.recordDurable(receipts);
  }
}

/** A tripwire whose death is recorded in `events` instead of killing the test process. */
function wire(at: CrashAt, events: string[]): Tripwire {
  return new Tripwire(at, () => events.push('died'));
}

describe('the kill points', () => {
  it('raw-acked dies before the pipeline sees the ack', async () => {
    const events: string[] = [];
    const target: ConfirmTarget<'primary-raw'> = {
      apply: async () => {
        events.push('applied');
      },
    };
    const confirm = killableConfirm(
      target,
      wire({ point: 'raw-acked', n: 2 }, events),
      'raw-acked',
    );
    await confirm.apply(rawAnchor(span), receipt());
    await confirm.apply(rawAnchor(span), receipt());
    expect(events).toEqual(['applied', 'died', 'applied']);
  });

  it('secondary-acked dies after the sink confirmed, before coverage is recorded', async () => {
    const events: string[] = [];
    const target: ConfirmTarget<'secondary'> = {
      apply: async () => {
        events.push('recorded');
      },
    };
    const confirm = killableConfirm(
      target,
      wire({ point: 'secondary-acked', n: 1 }, events),
      'secondary-acked',
    );
    await confirm.apply(derivedCoverage(PG, span), receipt(PG));
    expect(events).toEqual(['died', 'recorded']);
  });

  it('passes a set-aside on to the target, which quarantines it', async () => {
    const events: string[] = [];
    const target: ConfirmTarget<'secondary'> = {
      apply: async () => undefined,
      setAside: async (_confirm, at, refusal) => {
        events.push(`aside ${at.start} ${refusal.reason}`);
      },
    };
    const confirm = killableConfirm(
      target,
      wire({ point: 'secondary-acked', n: 5 }, events),
      'secondary-acked',
    );
    await confirm.setAside?.(derivedCoverage(PG, span), span, {
      reason: 'retry-exhausted',
      error: new Error('down'),
    });
    expect(events).toEqual(['aside 0 retry-exhausted']);
  });

  it('raw-submit dies once raw accepted the batch', async () => {
    const events: string[] = [];
    const inner: ReplayableSink<SourceBatch> = {
      descriptor: {
        id: RAW,
        kind: 'memory',
        durability: { kind: 'flush-close' },
        recovery: { kind: 'readable' },
      },
      cluster: 'c',
      submit: async () => {
        events.push('accepted');
      },
      flush: async () => undefined,
      close: async () => undefined,
      read: async function* () {
        yield* [];
      },
      held: async () => [{ partition: { topic: 't', partition: 0 }, spans: [span] }],
    };
    const raw = killableRaw(inner, wire({ point: 'raw-submit', n: 1 }, events));
    await raw.submit({ span, records: [] }, span, rawAnchor(span));
    expect(events).toEqual(['accepted', 'died']);
    expect(raw.descriptor).toBe(inner.descriptor);
    expect(await raw.held()).toEqual(await inner.held());
  });

  it('checkpoint dies before or after the durable tier merge', async () => {
    for (const phase of ['before', 'after'] as const) {
      const events: string[] = [];
      const store = new InMemoryCoverage({ sinks: [RAW] });
      const inner: CoverageTier = {
        merge: async (deltas) => {
          events.push('merged');
          await store.merge(deltas);
        },
        covered: (key) => store.covered(key),
        destinations: () => store.destinations(),
        saveCursor: (key, cursor) => store.saveCursor(key, cursor),
        rewindCursor: (key, cursor) => store.rewindCursor(key, cursor),
        loadCursor: (key) => store.loadCursor(key),
        knows: (sink) => store.knows(sink),
        close: () => store.close(),
      };
      const tier = killableTier(inner, wire({ point: 'checkpoint', n: 1, phase }, events));
      await tier.merge([
        { key: { sink: RAW, topic: 't', partition: 0 }, ranges: [{ start: 0, end: 5 }] },
      ]);
      expect(events).toEqual(phase === 'before' ? ['died', 'merged'] : ['merged', 'died']);
    }
  });

  it('recovery-window dies only in a recovering process', async () => {
    const inner = (events: string[]): Sink<'secondary', string> => ({
      descriptor: {
        id: PG,
        kind: 'memory',
        durability: { kind: 'transaction-commit' },
        recovery: { kind: 'write-only' },
      },
      submit: async () => {
        events.push('submitted');
      },
      flush: async () => undefined,
      close: async () => undefined,
    });
    const live: string[] = [];
    const at: CrashAt = { point: 'recovery-window', n: 1 };
    await killableSecondary(inner(live), wire(at, live), false).submit(
      'b',
      span,
      derivedCoverage(PG, span),
    );
    expect(live).toEqual(['submitted']);
    const recovering: string[] = [];
    await killableSecondary(inner(recovering), wire(at, recovering), true).submit(
      'b',
      span,
      derivedCoverage(PG, span),
    );
    expect(recovering).toEqual(['submitted', 'died']);
  });
});

describe('coverage-write', () => {
  it('stalls the fatal write and dies before it reaches the store', async () => {
    const events: string[] = [];
    const store = new RecordingCoverage(events);
    const coverage = killableCoverage(
      store,
      new Tripwire({ point: 'coverage-write', n: 2 }, () => events.push('died')),
      5,
    );
    const durable = { ...receipt(), durability: 'flush-close' as const };
    await coverage.recordDurable([durable]);
    expect(events).toEqual(['recorded']);
    const second = coverage.recordDurable([{ ...durable, span: offsetSpan('t', 0, 10, 20) }]);
    expect(events).toEqual(['recorded']);
    await second;
    // Died during the stall, before the write reached the store (a real child never resumes).
    expect(events).toEqual(['recorded', 'died', 'recorded']);
  });
});
