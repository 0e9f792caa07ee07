import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll } from 'vitest';
import {
  describeSourceContract,
  readToEnd,
  type ExpectedRecord,
  type WrittenRecord,
} from '@thalweg/contracts';
import { FILE_HEADER, FileSetSource } from '../../src/index.js';
import { ipcFile, oneColumn } from '../arrow-fixtures.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'twg-source-files-contract-'));
  dirs.push(dir);
  return dir;
}

const TOPIC = 'files-contract';
/** Small batches, so a cursor can fall at a batch boundary inside the log. */
const BATCH = 4;

/**
 * The records as NDJSON lines over two files, the first holding seven:
 * the set is one log whose offsets run on across files. Each record is
 * delivered with the name of its file as its only header.
 */
type Format = 'ndjson' | 'arrow-ipc';
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/**
 * A file of `records`, and each record's value as the source delivers it:
 * an NDJSON line as is; an Arrow IPC row (one Utf8 column `text`) as its
 * JSON object (row-json.ts).
 */
function fileOf(format: Format, records: readonly WrittenRecord[]) {
  if (format === 'ndjson') {
    return {
      bytes: records.map((r) => `${text(r.value)}\n`).join(''),
      values: records.map((r) => r.value),
    };
  }
  const texts = records.map((r) => text(r.value));
  return {
    bytes: ipcFile([oneColumn('text', vectorFromArray(texts, new Utf8()))]),
    values: texts.map((t) => Buffer.from(JSON.stringify({ text: t }), 'utf8')),
  };
}

const EXT: Record<Format, string> = { ndjson: '.ndjson', 'arrow-ipc': '.arrow' };

function openSet(dir: string, format: Format): Promise<FileSetSource> {
  const files = { kind: 'directory', directory: dir, extension: EXT[format] } as const;
  return FileSetSource.open(
    format === 'ndjson'
      ? { files, format, topic: TOPIC, maxBatchRecords: BATCH }
      : { files, format, topic: TOPIC, maxBatchRecords: BATCH },
  );
}

/**
 * The records over two files, the first holding seven: the set is one log
 * whose offsets run on across files. Each record is delivered with the
 * name of its file as its only header.
 */
async function fixture(format: Format, written: readonly (readonly WrittenRecord[])[]) {
  const dir = await freshDir();
  const records = written[0] ?? [];
  const files = [
    { name: `f000${EXT[format]}`, records: records.slice(0, 7), first: 0 },
    { name: `f001${EXT[format]}`, records: records.slice(7), first: 7 },
  ];
  const expected: ExpectedRecord[] = [];
  for (const f of files) {
    const { bytes, values } = fileOf(format, f.records);
    await writeFile(join(dir, f.name), bytes);
    values.forEach((value, i) =>
      expected.push({
        offset: f.first + i,
        key: null,
        value,
        headers: [[FILE_HEADER, Buffer.from(f.name, 'utf8')]],
      }),
    );
  }
  return {
    logs: [{ partition: { topic: TOPIC, partition: 0 }, records: expected }],
    open: () => openSet(dir, format),
  };
}

const FEATURES = {
  partitions: 1,
  keys: false,
  headers: false,
  nullHeaderValues: false,
  tombstones: false,
  cursors: 'batch-boundaries',
  offsets: 'dense',
} as const;

describeSourceContract('FileSetSource over NDJSON', {
  features: FEATURES,
  seed: (written) => fixture('ndjson', written),
  // A line longer than the reader may hold, in the second file.
  badInput: async () => {
    const dir = await freshDir();
    await writeFile(join(dir, 'f000.ndjson'), '{"ok":1}\n{"ok":2}\n');
    await writeFile(join(dir, 'f001.ndjson'), `{"ok":3}\n{"long":"${'x'.repeat(300)}"}\n`);
    return {
      run: async () =>
        readToEnd(
          await FileSetSource.open({
            files: { kind: 'directory', directory: dir, extension: '.ndjson' },
            format: 'ndjson',
            topic: TOPIC,
            maxBufferBytes: 64,
            readChunkBytes: 16,
          }),
        ),
      names: ['f001.ndjson', 'byte 9'],
    };
  },
});

describeSourceContract('FileSetSource over Arrow IPC files', {
  features: FEATURES,
  seed: (written) => fixture('arrow-ipc', written),
  // The second file cut short in the middle of its record batch.
  badInput: async () => {
    const dir = await freshDir();
    const whole = Buffer.from(
      fileOf('arrow-ipc', [{ key: null, value: Buffer.from('a'), headers: [] }]).bytes,
    );
    await writeFile(join(dir, 'f000.arrow'), whole);
    await writeFile(join(dir, 'f001.arrow'), whole.subarray(0, Math.floor(whole.byteLength / 2)));
    return { run: async () => readToEnd(await openSet(dir, 'arrow-ipc')), names: ['f001.arrow'] };
  },
});
