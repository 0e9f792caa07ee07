import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** A fresh path in a temporary directory of its own, removed after each test of the file. */
export function tempFiles(prefix: string): (name: string) => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });
  return async (name) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return join(dir, name);
  };
}
