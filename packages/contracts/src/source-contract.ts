import { describe, it } from 'vitest';
import { SOURCE_CONTRACT_CASES } from './source-cases.js';
import type { SourceContractFactory } from './source-subject.js';

/** Registers the source contract for one implementation: one `it` per clause that applies. */
export function describeSourceContract(name: string, factory: SourceContractFactory): void {
  describe(`source contract: ${name}`, () => {
    for (const c of SOURCE_CONTRACT_CASES) {
      if (!c.applies(factory)) continue;
      it(c.name, { timeout: factory.timeoutMs ?? 30_000 }, () => c.run(factory));
    }
  });
}
