import { join } from 'node:path';

/** The repository root, whose tsconfig.base.json the blocks compile under. */
export const repoRoot = join(import.meta.dirname, '..', '..', '..');

/**
 * A directory for the blocks' modules, inside this package so that their
 * `@thalweg/*` imports resolve through its node_modules to the workspace
 * packages. Under .cache/ (ignored by git, eslint and prettier); one per
 * test file, since vitest runs files in parallel.
 */
export function workDir(name: string): string {
  return join(import.meta.dirname, '..', '.cache', name);
}

export const baseConfig = join(repoRoot, 'tsconfig.base.json');
