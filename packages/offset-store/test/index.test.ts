import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The root export must load no storage client (ADR 0027): a LevelDB-only
 * user installs neither pg nor the AWS SDK, and a user of the in-memory
 * stores not even classic-level. Walks the modules each entry loads at run
 * time (`import type` is erased; `import { type X }` is kept under
 * verbatimModuleSyntax, so it counts) and lists the packages they reach.
 */
const src = join(import.meta.dirname, '..', 'src');
const STATEMENT = /^(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)';/gms;

function packagesLoadedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATEMENT)) {
      const [, typeOnly, spec] = m;
      if (typeOnly !== undefined || spec === undefined) continue;
      if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec);
    }
  };
  visit(join(src, entry));
  return packages;
}

describe('entries: what each one loads', () => {
  it('the root loads no storage client', () => {
    expect([...packagesLoadedBy('index.ts')].sort()).toEqual(['@thalweg/connector-core', 'zod']);
  });

  it.each([
    ['leveldb/index.ts', 'classic-level'],
    ['postgres/index.ts', 'pg'],
    ['s3/index.ts', '@aws-sdk/client-s3'],
  ])('%s loads its own client and no other', (entry, client) => {
    const clients = ['classic-level', 'pg', '@aws-sdk/client-s3'];
    const loaded = packagesLoadedBy(entry);
    expect(clients.filter((c) => loaded.has(c))).toEqual([client]);
  });
});
