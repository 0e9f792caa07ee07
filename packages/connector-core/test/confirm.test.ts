import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  derivedCoverage,
  NO_CONFIRM,
  rawAnchor,
  setAsideOf,
  type Confirm,
  type ConfirmTarget,
} from '../src/confirm.js';
import { offsetSpan } from '../src/offset-span.js';
import { SinkError } from '../src/sink-error.js';
import { sinkId } from '../src/sink-id.js';
import type { ReplayableSink, Sink } from '../src/sink.js';

const span = offsetSpan('t', 0, 0, 10);

describe('Confirm lanes', () => {
  it('admits the right tokens on each lane', () => {
    const raw: Confirm<'primary-raw'>[] = [rawAnchor(span), NO_CONFIRM];
    const secondary: Confirm<'secondary'>[] = [derivedCoverage(sinkId('pg'), span), NO_CONFIRM];
    expect(raw.map((c) => c.kind)).toEqual(['raw-anchor', 'none']);
    expect(secondary.map((c) => c.kind)).toEqual(['derived-coverage', 'none']);
  });

  it('rejects cross-lane tokens at compile time', () => {
    // These lines are checked by `tsc -b` (tsconfig.check.json): if a token
    // ever became assignable to the wrong lane, the directive would be unused
    // and the typecheck would fail.
    // @ts-expect-error a secondary stream cannot hold a raw-anchor token
    const wrongSecondary: Confirm<'secondary'> = rawAnchor(span);
    // @ts-expect-error the primary-raw stream cannot hold a coverage token
    const wrongRaw: Confirm<'primary-raw'> = derivedCoverage(sinkId('pg'), span);
    expect([wrongSecondary.kind, wrongRaw.kind]).toEqual(['raw-anchor', 'derived-coverage']);
  });

  it('types a sink by lane', () => {
    const submitSecondary = (sink: Sink<'secondary', string>) =>
      // @ts-expect-error a secondary sink's submit refuses a raw anchor
      sink.submit('batch', span, rawAnchor(span));
    const submitRaw = (sink: ReplayableSink<string>) =>
      // @ts-expect-error the raw sink's submit refuses a coverage token
      sink.submit('batch', span, derivedCoverage(sinkId('pg'), span));
    expectTypeOf(submitSecondary).returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf(submitRaw).returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf<ConfirmTarget<'secondary'>['apply']>()
      .parameter(0)
      .toEqualTypeOf<Confirm<'secondary'>>();
  });

  it('reads a set-aside from a submit refusal scoped to the batch, and only from one', () => {
    const sink = sinkId('pg');
    const refused = (errorClass: 'poison' | 'transient' | 'fatal-config', scope?: 'batch') =>
      new SinkError({ sink, errorClass, message: 'no', ...(scope === undefined ? {} : { scope }) });
    expect(setAsideOf(refused('poison', 'batch'))?.reason).toBe('poison');
    expect(setAsideOf(refused('transient', 'batch'))?.reason).toBe('retry-exhausted');
    // The sink itself failed, or it is not an error of ours: the lane ends.
    expect(setAsideOf(refused('poison'))).toBeNull();
    expect(setAsideOf(refused('transient'))).toBeNull();
    expect(setAsideOf(refused('fatal-config', 'batch'))).toBeNull();
    expect(setAsideOf(new Error('plain'))).toBeNull();
  });
});
