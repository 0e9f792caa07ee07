import { beforeAll, describe, expect, it } from 'vitest';
import { compileBlocks, type CompiledBlock } from '../src/compile-blocks.js';
import type { DocBlock } from '../src/doc-block.js';
import { runBlock } from '../src/run-block.js';
import { baseConfig, workDir } from './work-dir.js';

// The faults a doc can have, each as a block: the runner must name the
// Markdown file and line of each.
const blocks: DocBlock[] = [
  {
    file: 'README.md',
    line: 10,
    mode: 'run',
    code: "import { sinkId } from '@thalweg/connector-core';\nconsole.log(sinkId('raw'));\n",
  },
  {
    file: 'README.md',
    line: 20,
    mode: 'run',
    code: "import { sinkId } from '@thalweg/connector-core';\n\nconst n: number = sinkId('raw');\n",
  },
  {
    file: 'docs/guides/a.md',
    line: 30,
    mode: 'run',
    code: 'const fragment = await raw.flush();\n',
  },
  {
    file: 'docs/guides/a.md',
    line: 40,
    mode: 'run',
    code: "throw new Error('the documented call fails');\n",
  },
  {
    file: 'docs/guides/a.md',
    line: 50,
    mode: 'run',
    code: 'setInterval(() => undefined, 1000);\n',
  },
  {
    file: 'docs/guides/a.md',
    line: 60,
    mode: 'test',
    code: "import { expect, it } from 'vitest';\n\nit('fails', () => {\n  expect(1).toBe(2);\n});\n",
  },
  {
    file: 'docs/guides/a.md',
    line: 70,
    mode: 'test',
    code: "import { expect, it } from 'vitest';\n\nit('passes', () => {\n  expect(1).toBe(1);\n});\n",
  },
];

let compiled: CompiledBlock[];
beforeAll(() => {
  compiled = compileBlocks(blocks, workDir('self-test'), baseConfig);
});
const at = (line: number): CompiledBlock => {
  const c = compiled.find((b) => b.block.line === line);
  if (c === undefined) throw new Error(`no block at line ${String(line)}`);
  return c;
};

describe('compiling blocks', () => {
  it('compiles a whole module against the workspace packages', () => {
    expect(at(10).errors).toEqual([]);
  });

  it('names the Markdown file, line and column of a type error', () => {
    expect(at(20).errors).toEqual([
      expect.stringMatching(
        /^README\.md:23:7 TS2322 Type 'SinkId' is not assignable to type 'number'/,
      ),
    ]);
  });

  it('refuses a fragment that uses names it never declares', () => {
    expect(at(30).errors).toEqual(["docs/guides/a.md:31:24 TS2304 Cannot find name 'raw'."]);
  });
});

describe('running blocks', () => {
  it('passes a block that exits 0', async () => {
    expect(await runBlock(at(10), 20_000)).toEqual({ ok: true, report: '' });
  });

  it('fails a block that throws, naming it and showing its output', async () => {
    const run = await runBlock(at(40), 20_000);
    expect(run.ok).toBe(false);
    expect(run.report).toMatch(/^docs\/guides\/a\.md:40: the block exited with 1\n/);
    expect(run.report).toContain('the documented call fails');
    // The stack names the Markdown line the throw is on, not the module's.
    expect(run.report).toMatch(/at .*docs\/guides\/a\.md:41:7/);
  });

  it('fails a block that never exits', async () => {
    const run = await runBlock(at(50), 1_000);
    expect(run).toEqual({
      ok: false,
      report: 'docs/guides/a.md:50: the block did not finish within 1000 ms\n',
    });
  });

  it('runs a test block with vitest: a failing expectation fails it', async () => {
    const [failing, passing] = await Promise.all([
      runBlock(at(60), 30_000),
      runBlock(at(70), 30_000),
    ]);
    expect(failing.ok).toBe(false);
    expect(failing.report).toMatch(/^docs\/guides\/a\.md:60: the block exited with 1\n/);
    expect(passing).toEqual({ ok: true, report: '' });
  });
});
