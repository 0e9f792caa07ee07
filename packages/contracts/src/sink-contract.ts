import { describe, it } from 'vitest';
import type { Lane } from '@thalweg/connector-core';
import { SINK_CONTRACT_CASES } from './sink-cases.js';
import type { SinkContractFactory } from './sink-subject.js';

/**
 * Registers the sink contract for one implementation: one `it` per clause
 * that applies to the factory (the fault and restart clauses only where it
 * declares them). Call it at the top level of a test file. A clause named
 * (by the start of its name) in `knownViolations` is registered as
 * `it.fails`: known broken, and red again once fixed.
 */
export function describeSinkContract<L extends Lane, B>(
  name: string,
  factory: SinkContractFactory<L, B>,
  options: { readonly knownViolations?: readonly string[] } = {},
): void {
  describe(`sink contract: ${name}`, () => {
    for (const c of SINK_CONTRACT_CASES) {
      if (!c.applies(factory)) continue;
      const known = options.knownViolations?.some((v) => c.name.startsWith(v)) === true;
      (known ? it.fails : it)(c.name, { timeout: factory.timeoutMs ?? 30_000 }, () =>
        c.run(factory),
      );
    }
  });
}
