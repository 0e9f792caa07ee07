import { beforeAll, describe, expect, it } from 'vitest';
import { compileBlocks, type CompiledBlock } from '../src/compile-blocks.js';
import { findDocBlocks } from '../src/doc-block.js';
import { runBlock } from '../src/run-block.js';
import { baseConfig, repoRoot, workDir } from './work-dir.js';

// Every ```ts block of README.md, packages/*/README.md and docs/guides/*.md
// (the fence convention is in src/doc-block.ts): each compiles as a module
// of its own, and each `ts` and `ts test` block runs. `ts services` blocks
// run in doc-blocks.int.test.ts. A test is named by the block's file and
// line, and so is every error it reports.
const blocks = findDocBlocks(repoRoot);
let compiled: CompiledBlock[];
beforeAll(() => {
  compiled = compileBlocks(blocks, workDir('docs'), baseConfig);
}, 120_000);

const RUN_TIMEOUT_MS = 30_000;

describe('the documentation code blocks', () => {
  it('are found in the READMEs', () => {
    expect(blocks.filter((b) => b.file === 'README.md').length).toBeGreaterThan(0);
    expect(new Set(blocks.map((b) => b.file)).size).toBeGreaterThan(1);
  });

  describe.each(
    blocks.map((block, i) => ({ name: `${block.file}:${String(block.line)} (${block.mode})`, i })),
  )('$name', ({ i }) => {
    it('compiles', () => {
      expect(compiled[i]?.errors.join('\n')).toBe('');
    });

    if (blocks[i]?.mode === 'run' || blocks[i]?.mode === 'test') {
      it(
        'runs',
        async () => {
          const c = compiled[i];
          if (c === undefined || c.errors.length > 0) throw new Error('the block does not compile');
          const run = await runBlock(c, RUN_TIMEOUT_MS);
          expect(run.report).toBe('');
        },
        RUN_TIMEOUT_MS + 10_000,
      );
    }
  });
});
