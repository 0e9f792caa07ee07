import { describe, it } from 'vitest';
import { SOURCE_CONTRACT_CASES } from './source-cases.js';
import type { SourceContractFactory } from './source-subject.js';

/**
 * Registers the source contract for one implementation: one `it` per
 * clause that applies. A clause named (by the start of its name) in
 * `knownViolations` is registered as `it.fails`: the implementation is
 * known to break it, the suite says so, and it turns red once fixed, so
 * the entry is removed with the fix.
 */
export function describeSourceContract(
  name: string,
  factory: SourceContractFactory,
  options: { readonly knownViolations?: readonly string[] } = {},
): void {
  describe(`source contract: ${name}`, () => {
    for (const c of SOURCE_CONTRACT_CASES) {
      if (!c.applies(factory)) continue;
      const known = options.knownViolations?.some((v) => c.name.startsWith(v)) === true;
      (known ? it.fails : it)(c.name, { timeout: factory.timeoutMs ?? 30_000 }, () =>
        c.run(factory),
      );
    }
  });
}
