import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileSetSourceOptions } from '../../src/index.js';
import { collect, openSource, rejection, tempDir, values } from '../helpers.js';

/**
 * Issue 15: valid Arrow IPC, written and validated by pyarrow (stream-arrow's
 * fixtures, see make-fixtures.py there), that this source refused as corrupt
 * or refused for its compression.
 */
const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'stream-arrow', 'test', 'fixtures');

async function read(fixture: string): Promise<string[]> {
  const dir = await tempDir();
  await copyFile(join(FIXTURES, fixture), join(dir, 'x.arrow'));
  const options: FileSetSourceOptions = {
    files: { kind: 'directory', directory: dir, extension: '.arrow' },
    format: 'arrow-ipc',
  };
  return values(await collect(await openSource(options)));
}

describe.each(['.arrows', '.arrow'])('valid Arrow the file source reads (%s)', (suffix) => {
  it('a null-type column, which has no validity bitmap', async () => {
    expect(await read(`null-column${suffix}`)).toEqual([
      '{"n":null,"i":1}',
      '{"n":null,"i":null}',
      '{"n":null,"i":3}',
    ]);
  });

  it('LZ4 and ZSTD compressed bodies', async () => {
    for (const codec of ['lz4', 'zstd']) {
      const rows = await read(`compressed-${codec}${suffix}`);
      expect(rows).toHaveLength(300);
      expect(rows[3]).toBe('{"id":"3","name":null}');
      expect(rows[299]).toBe('{"id":"299","name":"name-0"}');
    }
  });

  it('a file with no record batch holds no record', async () => {
    expect(await read(`no-batches-utf8${suffix}`)).toEqual([]);
  });

  it('list view and run-end encoded columns are unsupported, not corrupt', async () => {
    for (const [name, column] of [
      ['list-view', 'lv'],
      ['run-end-encoded', 'r'],
    ]) {
      const error = await rejection(() => read(`${name}${suffix}`));
      expect(error).toMatchObject({
        code: 'TWG_FILE_IPC_UNSUPPORTED',
        file: 'x.arrow',
        field: `column "${column}"`,
      });
    }
  });
});
