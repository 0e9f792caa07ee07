import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FileSetSource } from '@thalweg/source-files';
import { emit, medianMs, round } from './measure.js';

// The source's full read of one NDJSON file (lines, CRLF, copies, offsets,
// batches) against plain `readline` over the same file, in the same run.
const RECORDS = 200_000;
const RECORD_BYTES = 256;
const dir = await mkdtemp(join(tmpdir(), 'twg-bench-ndjson-'));
try {
  const line = `{"k":"${'v'.repeat(RECORD_BYTES - 8)}"}`;
  const path = join(dir, 'bench.ndjson');
  await writeFile(path, `${line}\n`.repeat(RECORDS));
  const fileBytes = RECORDS * (RECORD_BYTES + 1);

  let seen = 0;
  const sourceMs = await medianMs(async () => {
    const source = await FileSetSource.open({
      files: { kind: 'paths', paths: [path] },
      format: 'ndjson',
      topic: 'bench',
    });
    seen = 0;
    for await (const batch of source.batches(new AbortController().signal))
      seen += batch.records.length;
    await source.close();
  }, 5);
  if (seen !== RECORDS) throw new Error(`source read ${seen} records of ${RECORDS}`);

  let lines = 0;
  const readlineMs = await medianMs(async () => {
    lines = 0;
    const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
    for await (const l of rl) if (l.length > 0) lines++;
  }, 5);
  if (lines !== RECORDS) throw new Error(`readline read ${lines} lines of ${RECORDS}`);

  const perS = (ms: number) => RECORDS / (ms / 1000);
  const mbPerS = (ms: number) => fileBytes / 1e6 / (ms / 1000);
  emit({
    bench: 'file-source',
    format: 'ndjson',
    records: RECORDS,
    record_bytes: RECORD_BYTES,
    ms: round(sourceMs),
    records_per_s: Math.round(perS(sourceMs)),
    mb_per_s: round(mbPerS(sourceMs)),
    baseline: 'node:readline over fs.createReadStream (strings, no batches)',
    baseline_records_per_s: Math.round(perS(readlineMs)),
    baseline_mb_per_s: round(mbPerS(readlineMs)),
    ratio: round(readlineMs / sourceMs, 2),
  });
} finally {
  await rm(dir, { recursive: true, force: true });
}
