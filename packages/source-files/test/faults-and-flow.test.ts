import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceBatch } from '@thalweg/connector-core';
import { describe, expect, it } from 'vitest';
import {
  FileSourceError,
  nodeFileAccess,
  type FileAccess,
  type FileSetSource,
} from '../src/index.js';
import { expectedJson, ipcFile, ipcStream, makeBatch, makeRows } from './arrow-fixtures.js';
import {
  checkSpans,
  collect,
  ndjsonOptions,
  openSource,
  tempDir,
  values,
  writeFiles,
} from './helpers.js';

/** Real file access whose n-th read (counted over every file) and n-th open fail once, transiently. */
function flaky(
  failReads: readonly number[],
  failOpens: readonly number[] = [],
): FileAccess & { failures: number } {
  let reads = 0;
  let opens = 0;
  const access = {
    failures: 0,
    async open(path: string) {
      if (failOpens.includes(++opens)) {
        access.failures++;
        throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
      }
      const file = await nodeFileAccess.open(path);
      return {
        stat: () => file.stat(),
        close: () => file.close(),
        read: async (into: Uint8Array, offset: number, length: number, position: number) => {
          if (failReads.includes(++reads)) {
            access.failures++;
            throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
          }
          return file.read(into, offset, length, position);
        },
      };
    },
  };
  return access;
}

/** Reads to the end, calling batches() again after every retryable failure. */
async function readThroughFailures(
  source: FileSetSource,
): Promise<{ batches: SourceBatch[]; retries: number }> {
  const batches: SourceBatch[] = [];
  let retries = 0;
  for (;;) {
    try {
      for await (const b of source.batches(new AbortController().signal)) batches.push(b);
      return { batches, retries };
    } catch (error) {
      if (!(error instanceof FileSourceError) || !error.canRetry) throw error;
      expect(error.code).toBe('TWG_FILE_READ_FAILED');
      expect(error.file).toMatch(/^f00\d\.(ndjson|arrow)$/);
      retries++;
    }
  }
}

describe('a refused read loses and repeats nothing', () => {
  it('NDJSON: failed reads and opens, then batches() again', async () => {
    const dir = await tempDir();
    const lines = Array.from({ length: 40 }, (_, i) => `{"n":${i}}`);
    await writeFiles(dir, [
      lines.slice(0, 15).join('\n'),
      lines.slice(15, 16).join('\n') + '\n',
      lines.slice(16).join('\r\n'),
    ]);
    const access = flaky([2, 3, 7, 12, 20], [2]);
    const source = await openSource(
      ndjsonOptions(dir, { readChunkBytes: 16, maxBatchRecords: 3, access }),
    );
    const { batches, retries } = await readThroughFailures(source);
    expect(retries).toBe(6);
    expect(access.failures).toBe(6);
    checkSpans(batches);
    expect(values(batches)).toEqual(lines);
  });

  it('Arrow IPC: failed reads of headers, bodies and footers, then batches() again', async () => {
    const dir = await tempDir();
    const rows = makeRows(0, 12);
    await writeFile(
      join(dir, 'f000.arrow'),
      ipcStream([makeBatch(rows.slice(0, 5)), makeBatch(rows.slice(5, 7))]),
    );
    await writeFile(join(dir, 'f001.arrow'), ipcFile([makeBatch(rows.slice(7, 12))]));
    const access = flaky([1, 4, 5, 9, 13, 14]);
    const source = await openSource({
      files: { kind: 'directory', directory: dir, extension: '.arrow' },
      format: 'arrow-ipc',
      maxBatchRecords: 3,
      access,
    });
    const { batches, retries } = await readThroughFailures(source);
    expect(retries).toBe(access.failures);
    expect(retries).toBeGreaterThan(3);
    checkSpans(batches);
    expect(values(batches)).toEqual(rows.map(expectedJson));
  });
});

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('pause, abort and close', () => {
  it('pause holds the next batch until resume', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\nc\n']);
    const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 1 }));
    const partitions = source.partitions();
    source.pause(partitions);
    const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    let settled = false;
    const first = it.next().then((r) => {
      settled = true;
      return r;
    });
    await turns(20);
    expect(settled).toBe(false);
    expect(source.stats().bytesRead).toBe(0);
    source.resume(partitions);
    const r = await first;
    expect(r.done).toBe(false);
    expect(values([r.value as SourceBatch])).toEqual(['a']);
    await it.return?.();
  });

  it('an abort while paused ends batches(); nothing is lost for the next call', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\nc\n']);
    const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 1 }));
    const controller = new AbortController();
    const it = source.batches(controller.signal)[Symbol.asyncIterator]();
    expect(values([(await it.next()).value as SourceBatch])).toEqual(['a']);
    source.pause(source.partitions());
    const next = it.next();
    controller.abort();
    expect((await next).done).toBe(true);
    source.resume(source.partitions());
    expect(values(await collect(source))).toEqual(['b', 'c']);
  });

  it('an abort while a batch is being read keeps that batch for the next call', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\nc\n']);
    const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 2 }));
    const controller = new AbortController();
    const pending = source.batches(controller.signal)[Symbol.asyncIterator]().next();
    controller.abort();
    expect((await pending).done).toBe(true);
    const rest = await collect(source);
    checkSpans(rest);
    expect(values(rest)).toEqual(['a', 'b', 'c']);
  });

  it('an aborted signal ends batches() at once', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\n']);
    const source = await openSource(ndjsonOptions(dir));
    const controller = new AbortController();
    controller.abort();
    expect(await collect(source, Number.POSITIVE_INFINITY, controller.signal)).toEqual([]);
  });

  it('close during a read ends the iteration quietly', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n']);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const access: FileAccess = {
      async open(path) {
        const file = await nodeFileAccess.open(path);
        return {
          stat: () => file.stat(),
          close: () => file.close(),
          read: async (...args) => {
            if (++reads === 1) await held;
            return file.read(...args);
          },
        };
      },
    };
    const source = await openSource(ndjsonOptions(dir, { access }));
    const next = source.batches(new AbortController().signal)[Symbol.asyncIterator]().next();
    while (reads === 0) await turns(1);
    await source.close();
    release();
    expect((await next).done).toBe(true);
  });

  it('close wakes a paused iterator, is idempotent, and refuses a later seek', async () => {
    const dir = await tempDir();
    await writeFiles(dir, ['a\nb\n']);
    const source = await openSource(ndjsonOptions(dir, { maxBatchRecords: 1 }));
    const it = source.batches(new AbortController().signal)[Symbol.asyncIterator]();
    await it.next();
    source.pause(source.partitions());
    const next = it.next();
    await source.close();
    await source.close();
    expect((await next).done).toBe(true);
    expect(await collect(source)).toEqual([]);
    expect(() =>
      source.seek(source.partitions()[0]!, { kind: 'log-offset', nextOffset: 0 }),
    ).toThrow(/after close/);
  });
});
