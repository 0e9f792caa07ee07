import { describe, expect, it } from 'vitest';
import {
  SOURCE_CONTRACT_CASES,
  describeSourceContract,
  type SourceContractCase,
} from '../src/index.js';
import { referenceSourceFactory, type SourceBreakage } from './reference-source.js';

// The suite against a faithful source: every clause passes.
describeSourceContract('the reference source', referenceSourceFactory());

function clause(prefix: string): SourceContractCase {
  const c = SOURCE_CONTRACT_CASES.find((k) => k.name.startsWith(prefix));
  if (c === undefined) throw new Error(`no case starts with "${prefix}"`);
  return c;
}

// ...and against broken ones: each breakage fails the clause it breaks.
const BROKEN: readonly [string, SourceBreakage, string][] = [
  ['yields a later batch first', { swapFirstTwo: true }, 'delivers every record once'],
  ['drops headers', { dropHeaders: true }, 'delivers every record once'],
  ['leaves a gap between spans', { gapInSpans: true }, 'delivers every record once'],
  ['ignores the cursor it was given', { ignoreSeek: true }, 'resumes from a committed position'],
  ['yields after close', { yieldAfterClose: true }, 'an abort ends the iteration'],
  ['accepts any cursor', { acceptAnyCursor: true }, 'a position it cannot take'],
];

describe('the source contract fails a source that breaks it', () => {
  for (const [what, breakage, prefix] of BROKEN) {
    it(`${what}: "${prefix}…" fails`, async () => {
      await expect(clause(prefix).run(referenceSourceFactory(breakage))).rejects.toMatchObject({
        code: 'TWG_CONTRACT_VIOLATED',
      });
    });
  }
});
