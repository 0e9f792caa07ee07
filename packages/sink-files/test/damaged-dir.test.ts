import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DAMAGED_DIR, keepAside } from '../src/damaged-dir.js';
import { FaultyFs, tempDir } from './helpers.js';

describe('keepAside', () => {
  it('moves files into damaged/ without writing over one already there, and syncs both directories', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, DAMAGED_DIR));
    // An earlier repair kept a segment of the same name (the sequence was reused).
    await writeFile(join(dir, DAMAGED_DIR, 'seg-a'), 'first');
    await writeFile(join(dir, DAMAGED_DIR, 'seg-a.1'), 'second');
    await writeFile(join(dir, 'seg-a'), 'third');
    await writeFile(join(dir, 'seg-b'), 'fourth');
    const log: string[] = [];
    const moved = await keepAside(new FaultyFs(log), dir, ['seg-a', 'seg-b']);
    expect(moved).toEqual(['seg-a.2', 'seg-b']);
    expect((await readdir(dir)).sort()).toEqual([DAMAGED_DIR]);
    const kept = async (name: string) => readFile(join(dir, DAMAGED_DIR, name), 'utf8');
    expect([await kept('seg-a'), await kept('seg-a.1'), await kept('seg-a.2')]).toEqual([
      'first',
      'second',
      'third',
    ]);
    expect(log.filter((l) => l.startsWith('syncDir'))).toEqual([
      `syncDir ${DAMAGED_DIR}`,
      `syncDir ${dir.split('/').at(-1)}`,
    ]);
  });
});
