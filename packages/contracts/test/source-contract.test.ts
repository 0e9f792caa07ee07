import { describe, expect, it } from 'vitest';
import {
  SOURCE_CONTRACT_CASES,
  describeSourceContract,
  type SourceContractCase,
} from '../src/index.js';
import { referenceSourceFactory, type SourceBreakage } from './reference-source.js';

// The suite against a faithful source: every clause passes.
describeSourceContract('the reference source', referenceSourceFactory());
describeSourceContract(
  'the reference source, sparse offsets',
  referenceSourceFactory({}, 'sparse'),
);

function clause(prefix: string): SourceContractCase {
  const c = SOURCE_CONTRACT_CASES.find((k) => k.name.startsWith(prefix));
  if (c === undefined) throw new Error(`no case starts with "${prefix}"`);
  return c;
}

// ...and against broken ones: each breakage fails the clause it breaks.
const BROKEN: readonly [string, SourceBreakage, string, ('dense' | 'sparse')?][] = [
  ['yields a later batch first', { swapFirstTwo: true }, 'delivers every record once'],
  ['drops headers', { dropHeaders: true }, 'delivers every record once'],
  ['leaves a gap between spans', { gapInSpans: true }, 'delivers every record once'],
  ['ignores the cursor it was given', { ignoreSeek: true }, 'resumes from a committed position'],
  ['yields after close', { yieldAfterClose: true }, 'an abort ends the iteration'],
  ['accepts any cursor', { acceptAnyCursor: true }, 'a position it cannot take'],
  [
    'leaves room between spans but declares dense offsets',
    { declareDense: true },
    'delivers every record once',
    'sparse',
  ],
  [
    'overlaps spans (sparse offsets)',
    { overlapSpans: true },
    'delivers every record once',
    'sparse',
  ],
];

describe('the source contract fails a source that breaks it', () => {
  for (const [what, breakage, prefix, offsets] of BROKEN) {
    it(`${what}: "${prefix}…" fails`, async () => {
      const factory = referenceSourceFactory(breakage, offsets);
      await expect(clause(prefix).run(factory)).rejects.toMatchObject({
        code: 'TWG_CONTRACT_VIOLATED',
      });
    });
  }
});
