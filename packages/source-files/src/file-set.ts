import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '@thalweg/connector-core';
import { readFailed } from './errors.js';
import type { FileStat } from './file-access.js';

/**
 * Which files make up the set, in their order:
 *
 * - `directory`: the regular files directly in `directory` (no recursion)
 *   whose name ends with `extension` and does not start with `.` (writers
 *   commonly stage a file under a dot-name before renaming it into place),
 *   sorted by name in UTF-16 code-unit order (`<` on JavaScript strings): not
 *   locale order, so every machine and every Node version sees one order.
 * - `paths`: exactly these files, in the order given.
 */
export type FileSetSpec =
  | { readonly kind: 'directory'; readonly directory: string; readonly extension: string }
  | { readonly kind: 'paths'; readonly paths: readonly string[] };

/** One file of the set as snapshotted when the source was opened. */
export interface FileEntry extends FileStat {
  /** How cursors and the `twg.file` header name the file: the entry name, or the path as given. */
  readonly name: string;
  readonly path: string;
}

/**
 * Lists and stats the set once. The set is fixed from here on: offsets are
 * counted across it, so a file added in the middle would shift every offset
 * after it; new files are read by opening a new source over a larger set.
 */
export async function resolveFileSet(
  spec: FileSetSpec,
  path = 'fileSource.files',
): Promise<FileEntry[]> {
  const named =
    spec.kind === 'directory'
      ? (await listDirectory(spec.directory, spec.extension)).map((name) => ({
          name,
          path: join(spec.directory, name),
        }))
      : spec.paths.map((path) => ({ name: path, path }));
  const seen = new Set<string>();
  named.forEach(({ name }, i) => {
    if (seen.has(name)) {
      throw new ConfigError(`${path}.paths[${i}]`, `${JSON.stringify(name)} is listed twice`);
    }
    seen.add(name);
  });
  const entries: FileEntry[] = [];
  for (const [i, { name, path: file }] of named.entries()) {
    let s;
    try {
      s = await stat(file);
    } catch (cause) {
      throw readFailed(name, 'stat', cause);
    }
    if (!s.isFile()) {
      throw new ConfigError(
        spec.kind === 'paths' ? `${path}.paths[${i}]` : path,
        `${JSON.stringify(file)} is not a regular file`,
      );
    }
    entries.push({ name, path: file, size: s.size, mtimeMs: s.mtimeMs });
  }
  return entries;
}

async function listDirectory(directory: string, extension: string): Promise<string[]> {
  let dirents;
  try {
    dirents = await readdir(directory, { withFileTypes: true });
  } catch (cause) {
    throw readFailed(directory, 'listing the directory', cause);
  }
  return dirents
    .filter(
      // A symbolic link is followed: the stat in resolveFileSet refuses one that is not a file.
      (d) =>
        (d.isFile() || d.isSymbolicLink()) && d.name.endsWith(extension) && !d.name.startsWith('.'),
    )
    .map((d) => d.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
