import { describe, expect, it } from 'vitest';
import { DocBlockError, parseDocBlocks } from '../src/doc-block.js';

const fence = '```';

function refusal(markdown: string): DocBlockError {
  try {
    parseDocBlocks('docs/guides/x.md', markdown);
  } catch (e) {
    if (e instanceof DocBlockError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('the fence convention', () => {
  it('reads each mode, the line of the fence and the code, and leaves other languages alone', () => {
    const md = [
      '# Title',
      `${fence}sh`,
      'pnpm demo',
      fence,
      `${fence}ts`,
      'console.log(1);',
      fence,
      `${fence}ts test`,
      "import { it } from 'vitest';",
      fence,
      `${fence}ts services`,
      'await 0;',
      fence,
      `${fence}ts compile`,
      '// needs a Databricks workspace',
      fence,
      '  ```ts',
      '  const indented = 1;',
      '  ```',
    ].join('\n');
    expect(parseDocBlocks('README.md', md)).toEqual([
      { file: 'README.md', line: 5, mode: 'run', code: 'console.log(1);\n' },
      { file: 'README.md', line: 8, mode: 'test', code: "import { it } from 'vitest';\n" },
      { file: 'README.md', line: 11, mode: 'services', code: 'await 0;\n' },
      { file: 'README.md', line: 14, mode: 'compile', code: '// needs a Databricks workspace\n' },
      { file: 'README.md', line: 17, mode: 'run', code: '  const indented = 1;\n' },
    ]);
  });

  it('does not end a block at a shorter or a different fence inside it', () => {
    const md = ['````ts', '```', '~~~', 'const x = 1;', '````'].join('\n');
    expect(parseDocBlocks('README.md', md)).toMatchObject([
      { line: 1, code: '```\n~~~\nconst x = 1;\n' },
    ]);
  });

  it('refuses an unknown word after ts, naming the file and line', () => {
    const e = refusal(['', `${fence}ts skip`, 'x', fence].join('\n'));
    expect(e.code).toBe('TWG_DOC_BLOCK_INVALID');
    expect(e.message).toBe(
      'docs/guides/x.md:2: unknown fence info "ts skip": use ts, ts test, ts services, ts service or ts compile',
    );
  });

  it('refuses a compile-only block that does not say why it cannot run', () => {
    expect(refusal([`${fence}ts compile`, 'const x = 1;', fence].join('\n')).message).toBe(
      'docs/guides/x.md:1: a `ts compile` block starts with a // comment saying why it cannot run',
    );
  });

  it('refuses ```typescript, which would otherwise escape the runner', () => {
    expect(refusal([`${fence}typescript`, 'x', fence].join('\n')).message).toBe(
      'docs/guides/x.md:1: write ```ts, not ```typescript',
    );
  });

  it('refuses a fence that is never closed', () => {
    expect(refusal(['a', `${fence}ts`, 'const x = 1;'].join('\n')).message).toBe(
      'docs/guides/x.md:2: fence is never closed',
    );
  });
});
