import { describe, expect, it } from 'vitest';
import { SINK_CONTRACT_CASES, describeSinkContract, type SinkContractCase } from '../src/index.js';
import { countedFactory, referenceFactory, type Breakage } from './reference-sink.js';

// The suite itself, against a faithful sink: every clause passes.
describeSinkContract('the reference sink', referenceFactory());
describeSinkContract('the reference sink, observed by its count', countedFactory());

function clause(prefix: string): SinkContractCase {
  const c = SINK_CONTRACT_CASES.find((k) => k.name.startsWith(prefix));
  if (c === undefined) throw new Error(`no case starts with "${prefix}"`);
  return c;
}

// ...and against broken ones: each breakage fails the clause it breaks.
// A contract that passed these would be a contract that cannot fail.
const BROKEN: readonly [string, Breakage, string][] = [
  ['confirms before the write', { confirmBeforeWrite: true }, 'confirms each batch once'],
  ['confirms two at once', { confirmConcurrently: true }, 'confirms in submission order'],
  ['confirms newest first', { confirmNewestFirst: true }, 'confirms in submission order'],
  ['flush that does not wait', { flushBeforeConfirm: true }, 'flush resolves only once'],
  ['accepts a submit after close', { acceptAfterClose: true }, 'close flushes'],
  ['refuses with plain errors', { plainErrors: true }, 'close flushes'],
  ['appends a replayed record again', { appendOnReplay: true }, 'a replayed batch'],
  ['appends a replay after a restart', { appendOnReplay: true }, 'after a restart'],
  ['accepts a malformed batch', { acceptMalformed: true }, 'a malformed batch'],
  ['fails on a transient error', { retryNothing: true }, 'a transient failure'],
  ['fails with a plain error', { plainErrors: true }, 'a fatal failure'],
  ['settles a given-up batch silently', { silentSetAside: true }, 'a batch whose retries ran out'],
  ['fails when retries run out', { failWhenExhausted: true }, 'a batch whose retries ran out'],
  ['reports a stale queue fill', { stalePressure: true }, 'reports its queue fill'],
];

describe('the sink contract fails a sink that breaks it', () => {
  for (const [what, breakage, prefix] of BROKEN) {
    it(`${what}: "${prefix}…" fails`, async () => {
      await expect(clause(prefix).run(referenceFactory(breakage))).rejects.toMatchObject({
        code: 'TWG_CONTRACT_VIOLATED',
      });
    });
  }
});

describe('the sink contract fails a counted sink that breaks it', () => {
  it('confirms before the write: "confirms each batch once…" fails', async () => {
    await expect(
      clause('confirms each batch once').run(countedFactory({ confirmBeforeWrite: true })),
    ).rejects.toMatchObject({ code: 'TWG_CONTRACT_VIOLATED' });
  });
});
