import { kafkaBrokers, postgresUrl, s3Endpoint } from '@thalweg/test-services';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileBlocks, type CompiledBlock } from '../src/compile-blocks.js';
import { findDocBlocks } from '../src/doc-block.js';
import { runBlock } from '../src/run-block.js';
import { baseConfig, repoRoot, workDir } from './work-dir.js';

// The `ts services` blocks: compiled (doc-blocks.test.ts checks that too)
// and run here, where the THALWEG_* endpoints of the real services are set.
// A block reads the variable of the service it needs; a missing service
// fails, never skips.
const blocks = findDocBlocks(repoRoot).filter((b) => b.mode === 'services');
let compiled: CompiledBlock[];
beforeAll(() => {
  postgresUrl();
  kafkaBrokers();
  s3Endpoint();
  compiled = compileBlocks(blocks, workDir('docs-services'), baseConfig);
}, 120_000);

const RUN_TIMEOUT_MS = 60_000;

describe('the documentation code blocks that need the services', () => {
  it('are found', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((block, i) => ({ name: `${block.file}:${String(block.line)}`, i })))(
    '$name runs',
    async ({ i }) => {
      const c = compiled[i];
      if (c === undefined) throw new Error('not compiled');
      expect(c.errors.join('\n')).toBe('');
      const run = await runBlock(c, RUN_TIMEOUT_MS);
      expect(run.report).toBe('');
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});
