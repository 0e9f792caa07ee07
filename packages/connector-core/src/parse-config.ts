import type { z } from 'zod';
import { ConfigError } from './errors.js';

/**
 * Validates configuration once, at the edge. A refusal names the dotted path
 * of the first bad field and why; every other problem found is appended, so a
 * user fixes a config in one pass rather than one error at a time.
 *
 * This is the one path convention of every component: the component's root
 * name (`config`, `fileSource`, `rawSegments`, `postgresSink`, `kafkaSource`,
 * `zerobus`, the offset store's `levelDbCoverage`, `s3Leases`, ... listed in
 * ADR 0015), then `.field` for a key and `[i]` for an array element. An
 * unknown key (schemas are strict: a misspelt knob must not fall back to its
 * default) is named by its own path, `fileSource.maxBatchRecs`, not by its
 * parent's.
 */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  input: unknown,
  rootPath = '',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          path: configPath(rootPath, [...issue.path, key]),
          message: 'is not an option here (unknown key)',
        }))
      : [{ path: configPath(rootPath, issue.path), message: issue.message }],
  );
  const [first, ...rest] = problems;
  // safeParse never fails without at least one issue.
  const head = first ?? { path: rootPath, message: 'invalid' };
  const more =
    rest.length === 0 ? '' : ` (also: ${rest.map((p) => `${p.path}: ${p.message}`).join('; ')})`;
  throw new ConfigError(head.path, head.message + more);
}

/** A field's path in the shared convention: `root.a.b[0].c`. */
export function configPath(root: string, path: readonly PropertyKey[]): string {
  const parts = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  const joined = `${root}${parts}`;
  return joined.startsWith('.') ? joined.slice(1) : joined;
}
