import type { z } from 'zod';
import { ConfigError } from './errors.js';

/**
 * Validates configuration once, at the edge. A refusal names the dotted path
 * of the first bad field and why; every other problem found is appended, so a
 * user fixes a config in one pass rather than one error at a time.
 */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  input: unknown,
  rootPath = '',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => ({
    path: joinPath(rootPath, issue.path),
    message: issue.message,
  }));
  const [first, ...rest] = problems;
  // safeParse never fails without at least one issue.
  const head = first ?? { path: rootPath, message: 'invalid' };
  const more =
    rest.length === 0 ? '' : ` (also: ${rest.map((p) => `${p.path}: ${p.message}`).join('; ')})`;
  throw new ConfigError(head.path, head.message + more);
}

function joinPath(root: string, path: readonly PropertyKey[]): string {
  const parts = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  const joined = `${root}${parts}`;
  return joined.startsWith('.') ? joined.slice(1) : joined;
}
