import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * What the runner does with a ```ts block, from the words after `ts` on its
 * opening fence:
 *
 * - ```ts            compile, then run with node: the block is a whole
 *                    module that needs nothing but the packages and the disk;
 * - ```ts test       compile, then run with vitest: the block is a test file;
 * - ```ts services   compile here, run by the integration suite, where the
 *                    THALWEG_* endpoints of the real services are set;
 * - ```ts service    a long-running service (it reads until told to stop):
 *                    compiled here, run by the integration suite by a
 *                    scenario of its own (service-blocks.int.test.ts) that
 *                    feeds it, waits for its effect and stops it with
 *                    SIGTERM; a service block no scenario claims fails;
 * - ```ts compile    compile only. Its first line must be a `//` comment that
 *                    says why it cannot run (what it would need).
 *
 * Every mode type-checks the block as a module of its own, strict, against
 * the packages' published types; a fragment does not compile. Any other word
 * after `ts` is refused, as is ```typescript, so a block cannot slip past by
 * its spelling.
 */
export type BlockMode = 'run' | 'test' | 'services' | 'service' | 'compile';

export interface DocBlock {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly mode: BlockMode;
  readonly code: string;
}

/** A fence or block that breaks the convention, named by file and line. */
export class DocBlockError extends Error {
  readonly code = 'TWG_DOC_BLOCK_INVALID';
  constructor(
    readonly file: string,
    readonly line: number,
    reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'DocBlockError';
  }
}

const modes: Readonly<Record<string, BlockMode>> = {
  '': 'run',
  test: 'test',
  services: 'services',
  service: 'service',
  compile: 'compile',
};

/** The ```ts blocks of one Markdown text. Other fences are left alone. */
export function parseDocBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const fence = /^ {0,3}(`{3,}|~{3,})\s*(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (fence === null) continue;
    const [, marks = '```', lang = '', rest = ''] = fence;
    const start = i;
    // The closing fence: the same character, at least as long, nothing after.
    let end = i + 1;
    while (end < lines.length && !isClosing(lines[end] ?? '', marks)) end += 1;
    if (end === lines.length) throw new DocBlockError(file, start + 1, 'fence is never closed');
    i = end;
    if (lang === 'typescript' || lang === 'tsx' || lang === 'mts') {
      throw new DocBlockError(file, start + 1, `write \`\`\`ts, not \`\`\`${lang}`);
    }
    if (lang !== 'ts') continue;
    const mode = modes[rest.trim()];
    if (mode === undefined) {
      throw new DocBlockError(
        file,
        start + 1,
        `unknown fence info "ts ${rest.trim()}": use ts, ts test, ts services, ts service or ts compile`,
      );
    }
    const code = lines.slice(start + 1, end).join('\n') + '\n';
    if (mode === 'compile' && !/^\/\/ \S/.test(code)) {
      throw new DocBlockError(
        file,
        start + 1,
        'a `ts compile` block starts with a // comment saying why it cannot run',
      );
    }
    blocks.push({ file, line: start + 1, mode, code });
  }
  return blocks;
}

function isClosing(line: string, marks: string): boolean {
  const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return close?.[1] !== undefined && close[1][0] === marks[0] && close[1].length >= marks.length;
}

/**
 * Where documentation lives: the root README, each package's README and the
 * guides under docs/guides/.
 */
export function docFiles(root: string): string[] {
  const files = [join(root, 'README.md')];
  for (const name of readdirSync(join(root, 'packages')).sort()) {
    const readme = join(root, 'packages', name, 'README.md');
    if (existsSync(readme)) files.push(readme);
  }
  const guides = join(root, 'docs', 'guides');
  if (existsSync(guides)) {
    for (const name of readdirSync(guides).sort()) {
      if (name.endsWith('.md')) files.push(join(guides, name));
    }
  }
  return files;
}

/** Every ```ts block of the repository's documentation. */
export function findDocBlocks(root: string): DocBlock[] {
  return docFiles(root).flatMap((path) =>
    parseDocBlocks(relative(root, path), readFileSync(path, 'utf8')),
  );
}
