import { appendFile, open, readFile, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FileDqAudit, InMemoryDqAudit, type DqAuditStore } from '../../src/index.js';
import { dqAuditContract, entry } from './dq-audit-contract.js';
import { tempFiles } from './temp-files.js';

const tempPath = tempFiles('twg-dq-audit-');
const fileAt = () => tempPath('nested/dq-audit.jsonl');

/** A trail of two windows, closed, and its text. */
async function twoWindows(path: string): Promise<string> {
  const store = await FileDqAudit.open({ path });
  await store.record([entry(0, 10, 9, 1)]);
  await store.record([entry(10, 20, 10, 0)]);
  await store.close();
  return (await readFile(path)).toString();
}

dqAuditContract({ name: 'in memory', open: async () => new InMemoryDqAudit(), reopen: null });

const paths = new WeakMap<DqAuditStore, string>();
dqAuditContract({
  name: 'file',
  open: async () => {
    const path = await fileAt();
    const store = await FileDqAudit.open({ path });
    paths.set(store, path);
    return store;
  },
  reopen: async (store) => {
    await store.close();
    const path = paths.get(store) ?? '';
    const again = await FileDqAudit.open({ path });
    paths.set(again, path);
    return again;
  },
});

describe('the dq-audit file', () => {
  it('does not grow when a replay records a span it holds', async () => {
    const path = await fileAt();
    const store = await FileDqAudit.open({ path });
    await store.record([entry(0, 10, 9, 1)]);
    const size = (await stat(path)).size;
    await store.record([entry(0, 10, 9, 1), entry(0, 5, 5, 0)]);
    expect((await stat(path)).size).toBe(size);
    await store.close();
  });

  it('cuts a torn last line without its newline on open, and appends after the whole lines', async () => {
    const path = await fileAt();
    const store = await FileDqAudit.open({ path });
    await store.record([entry(0, 10, 9, 1)]);
    await store.close();
    const whole = await readFile(path);
    await appendFile(path, '1234abcd {"sink":"s","topic":"t","parti');
    const logged: string[] = [];
    const again = await FileDqAudit.open({ path, log: (l) => logged.push(l) });
    expect(again.opened).toEqual({ lines: 1, tornBytes: 39 });
    expect(logged.join('\n')).toMatch(/cut a torn last line \(39 bytes/);
    expect(await readFile(path)).toEqual(whole);
    await again.record([entry(10, 20, 10, 0)]);
    await again.close();
    const third = await FileDqAudit.open({ path });
    expect(await third.totals('s')).toEqual({ c: { passed: 19, failed: 1 } });
    await third.close();
  });

  it('cuts a whole last line that fails its checksum (a disk that lost the start of an append)', async () => {
    const path = await fileAt();
    const text = await twoWindows(path);
    // Damage the last line's JSON, keep its newline.
    await writeFile(path, text.replace(/"passed":10/, '"passed":99'));
    const again = await FileDqAudit.open({ path });
    expect(await again.read()).toEqual([entry(0, 10, 9, 1)]);
    expect(again.opened.tornBytes).toBeGreaterThan(0);
    await again.close();
  });

  it('refuses a damaged line that is not the last, naming the file and the line', async () => {
    const path = await fileAt();
    const text = await twoWindows(path);
    await writeFile(path, text.replace(/"passed":9,/, '"passed":8,'));
    await expect(FileDqAudit.open({ path })).rejects.toMatchObject({
      code: 'TWG_PIPELINE_DQ_AUDIT_CORRUPT',
      message: expect.stringContaining(`${path}: line 2 fails its checksum`) as unknown,
    });
  });

  it('finishes a header torn at creation, and never cuts a file that is not a trail', async () => {
    const torn = await fileAt();
    const store = await FileDqAudit.open({ path: torn });
    await store.close();
    const header = await readFile(torn);
    await writeFile(torn, header.subarray(0, 12));
    const again = await FileDqAudit.open({ path: torn });
    await again.record([entry(0, 1, 1, 0)]);
    await again.close();
    expect((await readFile(torn)).subarray(0, header.byteLength)).toEqual(header);

    const foreign = await fileAt();
    await FileDqAudit.open({ path: foreign }).then((s) => s.close());
    await writeFile(foreign, 'some other file');
    await expect(FileDqAudit.open({ path: foreign })).rejects.toThrow(
      /line 1 is not a twg-dq-audit header/,
    );
    expect((await readFile(foreign)).toString()).toBe('some other file');
  });

  it('cuts a failed append back to its synced lines, so the retry leaves no damage behind', async () => {
    const path = await fileAt();
    let failSync = false;
    // The real handle, whose sync fails once while `failSync` is set.
    const openFile = async (p: string, flags: 'r+' | 'wx+'): Promise<FileHandle> => {
      const handle = await open(p, flags);
      return new Proxy(handle, {
        get(target, prop, receiver) {
          if (prop === 'sync' && failSync) {
            failSync = false;
            return async () => {
              throw new Error('EIO (injected)');
            };
          }
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function'
            ? (value as (...a: unknown[]) => unknown).bind(target)
            : value;
        },
      });
    };
    const store = await FileDqAudit.open({ path, openFile });
    await store.record([entry(0, 10, 10, 0)]);
    const synced = (await stat(path)).size;
    failSync = true;
    await expect(
      store.record([entry(10, 20, 10, 0, 'a-long-check-name'), entry(20, 30, 10, 0)]),
    ).rejects.toThrow(/EIO/);
    expect((await stat(path)).size).toBe(synced);
    expect(await store.read()).toEqual([entry(0, 10, 10, 0)]);
    await store.record([entry(10, 20, 10, 0)]);
    await store.close();
    const again = await FileDqAudit.open({ path });
    expect(again.opened).toEqual({ lines: 2, tornBytes: 0 });
    expect(await again.totals('s')).toEqual({ c: { passed: 20, failed: 0 } });
    await again.close();
  });
});
