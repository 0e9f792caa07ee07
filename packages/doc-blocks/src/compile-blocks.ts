import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { DocBlock } from './doc-block.js';

/** A block written out as a module, and what the compiler said about it. */
export interface CompiledBlock {
  readonly block: DocBlock;
  /** The module the block was written to. */
  readonly source: string;
  /** The JavaScript tsc emitted for it. */
  readonly output: string;
  /** Compiler errors, each as `file:line:column TSnnnn message` of the Markdown. */
  readonly errors: readonly string[];
}

/** `packages/sink-files/README.md` line 9 -> `packages-sink-files-readme-l9`. */
export function blockName(block: DocBlock): string {
  const stem = block.file
    .replace(/\.md$/i, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .toLowerCase();
  return `${stem}-l${String(block.line)}`;
}

/**
 * Writes each block to `dir` as a module of its own and compiles them all in
 * one program with the repository's compiler options (tsconfig.base.json:
 * strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess...). `dir`
 * must lie inside a workspace package that depends on the `@thalweg/*`
 * packages, so their imports resolve as a user's would: to the packages'
 * published `exports` (dist/), which `tsc -b` builds. The JavaScript lands
 * in `dir/out/`. A tsconfig.json is left in `dir`, so `tsc -p dir` shows the
 * same errors by hand.
 */
export function compileBlocks(
  blocks: readonly DocBlock[],
  dir: string,
  baseConfig: string,
): CompiledBlock[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, 'tsconfig.json');
  writeFileSync(
    configPath,
    JSON.stringify(
      {
        extends: baseConfig,
        compilerOptions: {
          composite: false,
          declaration: false,
          declarationMap: false,
          // Run with --enable-source-maps, a stack names the block's own lines
          // (run-block.ts turns them into the Markdown's).
          sourceMap: true,
          rootDir: '.',
          outDir: 'out',
          types: ['node'],
        },
        include: ['*.ts'],
      },
      null,
      2,
    ),
  );
  const sources = blocks.map((block) => {
    const name = blockName(block) + (block.mode === 'test' ? '.test' : '');
    const source = join(dir, `${name}.ts`);
    writeFileSync(source, block.code);
    return { block, source, output: join(dir, 'out', `${name}.js`) };
  });

  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (parsed === undefined) throw new Error(`could not read ${configPath}`);
  const program = ts.createProgram(
    sources.map((s) => s.source),
    parsed.options,
  );
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];

  const errorsOf = new Map<string, string[]>(sources.map((s) => [s.source, []]));
  const elsewhere: string[] = [];
  for (const d of diagnostics) {
    const message = `TS${String(d.code)} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    const fileName = d.file?.fileName;
    const own = sources.find((s) => s.source === fileName);
    if (own === undefined || d.file === undefined || d.start === undefined) {
      elsewhere.push(fileName === undefined ? message : `${fileName}: ${message}`);
      continue;
    }
    const at = d.file.getLineAndCharacterOfPosition(d.start);
    // The block's first line is the one after its opening fence.
    const line = own.block.line + 1 + at.line;
    errorsOf
      .get(own.source)
      ?.push(`${own.block.file}:${String(line)}:${String(at.character + 1)} ${message}`);
  }
  // An error outside every block (a broken option, a package's .d.ts) fails
  // them all: none of them was checked.
  return sources.map((s) => ({
    ...s,
    errors: [...elsewhere, ...(errorsOf.get(s.source) ?? [])],
  }));
}
